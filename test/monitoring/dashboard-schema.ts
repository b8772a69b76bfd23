// Checks a Grafana dashboard document against Grafana's own dashboard schema, offline: @grafana/schema publishes it
// as TypeScript types generated from Grafana's CUE kinds (the classic dashboard model, and each core panel's options
// and field config). The document is written into a TypeScript file as an object literal and type-checked, so a
// misspelt key (excess property), a missing required one, a wrong type or a value outside an enum is a diagnostic.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const panelcfg = (name: string, file: string): string => `@grafana/schema/dist/esm/raw/composable/${name}/panelcfg/x/${file}PanelCfg_types.gen`;

// The panel kinds the labgate dashboard uses, each with its options and custom field config.
const header = `
import type { Dashboard, FieldConfig, Panel, RowPanel } from '@grafana/schema';
import type * as TimeSeries from '${panelcfg('timeseries', 'TimeSeries')}';
import type * as Stat from '${panelcfg('stat', 'Stat')}';
import type * as StateTimeline from '${panelcfg('statetimeline', 'StateTimeline')}';

/** A type as JSON spells it: an enum is its values. */
type Json<T> = unknown extends T ? T : T extends string ? \`\${T}\` : T extends number | boolean | null | undefined ? T : T extends readonly (infer U)[] ? Json<U>[] : { [K in keyof T]: Json<T[K]> };
/** Grafana fills a panel's options and field config from the plugin's defaults: each key may be left out, none added. */
type Loose<T> = T extends readonly (infer U)[] ? Loose<U>[] : T extends object ? { [K in keyof T]?: Loose<T[K]> } : T;
type PanelOf<Kind extends string, Options, Custom> = Json<Omit<Panel, 'type' | 'options' | 'fieldConfig'>> & {
  type: Kind;
  options: Json<Loose<Options>>;
  fieldConfig: { defaults: Json<Omit<FieldConfig, 'custom'>> & { custom?: Json<Loose<Custom>> }; overrides: Json<NonNullable<Panel['fieldConfig']>['overrides']> };
};
type LabgatePanel =
  | PanelOf<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig>
  | PanelOf<'stat', Stat.Options, never>
  | PanelOf<'state-timeline', StateTimeline.Options, StateTimeline.FieldConfig>
  | Json<RowPanel>;
export const dashboard: Json<Omit<Dashboard, 'panels'>> & { panels: LabgatePanel[] } = `;

/** The schema's complaints about each document (a dashboard JSON text), one line each; empty when it conforms. */
export function dashboardSchemaProblems(...documents: string[]): string[][] {
  const files = new Map(documents.map((d, i) => [join(repo, 'monitoring', 'grafana', `.dashboard-schema-check-${i}.ts`), `${header}${d.trim()};\n`]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  // The documents exist only in memory; everything else (@grafana/schema, the TypeScript library) is read from disk.
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language) => {
    const text = files.get(name);
    return text === undefined ? getSourceFile(name, language) : ts.createSourceFile(name, text, language);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  const program = ts.createProgram([...files.keys()], options, host);
  const headerLines = header.split('\n').length - 1;
  return [...files.keys()].map((file) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => {
      const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line - headerLines + 1 : undefined;
      return `${ts.flattenDiagnosticMessageText(d.messageText, ' ')}${at === undefined ? '' : ` (document line ${at})`}`;
    }),
  );
}
