// The metric and label names a PromQL expression names (enough of PromQL's grammar for the dashboard's and the
// rules' queries): series selectors and their matchers, grouping and matching clauses, functions and keywords.

/** What one expression names. */
export interface PromqlNames {
  metrics: string[];
  labels: string[];
  /** Functions it calls (`rate`, `histogram_quantile`, Grafana's `label_values`). */
  functions: string[];
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan']);
const CLAUSE = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/** The names in `expr`; Grafana's variables (`$gateway`, `$__rate_interval`) may stand in strings and ranges. */
export function promqlNames(expr: string): PromqlNames {
  // Grafana's variable query label_values(selector, label) names a label of the selector's metric.
  const variable = /^\s*label_values\s*\(([\s\S]*),\s*([A-Za-z_]\w*)\s*\)\s*$/.exec(expr);
  const labels: string[] = variable ? [variable[2]!] : [];
  // String literals hold values, never names; ranges and subqueries hold durations.
  let rest = (variable ? variable[1]! : expr).replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\[[^\]]*\]/g, ' ');
  rest = rest.replace(/\{([^}]*)\}/g, (_all, matchers: string) => {
    for (const m of matchers.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)/g)) labels.push(m[1]!);
    return ' ';
  });
  rest = rest.replace(CLAUSE, (_all, _keyword: string, list: string) => {
    labels.push(
      ...list
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean),
    );
    return ' ';
  });
  const metrics: string[] = [];
  const functions: string[] = variable ? ['label_values'] : [];
  for (const m of rest.matchAll(/(?<![\w.$])([A-Za-z_:][\w:]*)(\s*\()?/g)) {
    const name = m[1]!;
    if (m[2]) functions.push(name);
    else if (!KEYWORDS.has(name.toLowerCase())) metrics.push(name);
  }
  return { metrics: [...new Set(metrics)], labels: [...new Set(labels)], functions: [...new Set(functions)] };
}

/** Labels a Go template or a Grafana legend names: `{{ $labels.sink }}`, `{{gateway}}`. */
export function templateLabels(text: string): string[] {
  return [...text.matchAll(/\$labels\.(\w+)|\{\{\s*(\w+)\s*\}\}/g)].map((m) => (m[1] ?? m[2])!);
}
