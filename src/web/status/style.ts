// The page's stylesheet, served as /status.css. Built for a 7-inch 800×480 touchscreen first (big targets,
// one column, tables scroll sideways) and widening to a desktop grid.

/** The stylesheet's source. */
export const styleSheet = `:root { --green: #1a7f37; --amber: #b26a00; --red: #c62828; --ink: #1f2328; --muted: #59636e; --line: #d0d7de; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header.top { display: flex; justify-content: space-between; align-items: center; padding: 8px 12px; background: #24292f; color: #fff; }
header.top h1 { font-size: 1.2rem; margin: 0; } header.top small { font-weight: normal; opacity: .8; }
main { padding: 8px 12px; } footer { padding: 8px 12px 24px; color: var(--muted); }
h2 { font-size: 1.1rem; margin: 20px 0 8px; } h3 { font-size: 1rem; margin: 0 0 6px; display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
.summary { padding: 12px; border-radius: 8px; font-size: 1.1rem; font-weight: 600; display: flex; justify-content: space-between; flex-wrap: wrap; gap: 8px; color: #fff; }
.summary-green { background: var(--green); } .summary-amber { background: var(--amber); } .summary-red { background: var(--red); }
.summary .lamp .dot { background: #fff; } .updated { font-weight: normal; font-size: .9rem; opacity: .9; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 10px; }
.card { background: #fff; border: 1px solid var(--line); border-left: 8px solid var(--line); border-radius: 8px; padding: 10px; }
.card-green { border-left-color: var(--green); } .card-amber { border-left-color: var(--amber); } .card-red { border-left-color: var(--red); }
.lamp { display: inline-flex; align-items: center; gap: 6px; font-weight: 600; }
.lamp .dot { width: 14px; height: 14px; border-radius: 50%; display: inline-block; }
.lamp-green .dot { background: var(--green); } .lamp-amber .dot { background: var(--amber); } .lamp-red .dot { background: var(--red); }
.card .lamp-green { color: var(--green); } .card .lamp-amber { color: var(--amber); } .card .lamp-red { color: var(--red); }
.reason { color: var(--red); margin: 4px 0; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: 1fr 1fr; gap: 2px 12px; margin: 0; }
.fact.wide { grid-column: 1 / -1; } .fact code { font-size: .85rem; word-break: break-all; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin: 8px 0 0; }
.chip { text-decoration: none; color: var(--ink); background: #fff; border: 1px solid var(--line); border-radius: 16px; padding: 4px 10px; min-height: 32px; display: inline-flex; align-items: center; }
.fact dt { color: var(--muted); font-size: .8rem; } .fact dd { margin: 0; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; white-space: nowrap; } td.num { text-align: right; white-space: nowrap; }
tr.differs td { background: #fff4d6; font-weight: 600; }
.delivery { display: inline-block; padding: 1px 6px; border-radius: 10px; font-size: .8rem; margin: 1px 0; white-space: nowrap; background: #eaeef2; }
.delivery-sent { background: #dafbe1; color: var(--green); } .delivery-dead, .delivery-conflict { background: #ffebe9; color: var(--red); }
.delivery-pending { background: #fff4d6; color: var(--amber); }
.tag { font-size: .75rem; padding: 0 4px; border: 1px solid var(--muted); border-radius: 4px; }
.count { display: inline-block; min-width: 1.6em; padding: 0 6px; border-radius: 10px; background: #eaeef2; text-align: center; font-size: .9rem; }
.conflict { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px; margin-bottom: 10px; }
.row { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; } form.action { display: inline; margin: 0; }
.btn { min-height: 44px; min-width: 44px; padding: 8px 14px; border-radius: 6px; font: inherit; font-weight: 600; cursor: pointer; border: 1px solid #1f6feb; }
.btn-primary { background: #1f6feb; color: #fff; } .btn-secondary { background: #fff; color: #1f6feb; }
.flash { margin: 8px 12px; padding: 10px; border-radius: 6px; background: #ddf4ff; border: 1px solid #54aeff; }
.flash-error { background: #ffebe9; border-color: var(--red); }
.reload { margin: 8px 0 0; padding: 8px 12px; border-radius: 8px; border: 1px solid var(--line); background: #fff; overflow-wrap: anywhere; }
.reload p { margin: 4px 0; } .reload-refused { border-color: var(--red); background: #ffebe9; } .reload-applied { border-color: #54aeff; background: #ddf4ff; }
.banner { margin: 8px 0 0; padding: 8px 12px; border-radius: 8px; border: 1px solid var(--line); background: #fff; overflow-wrap: anywhere; }
.banner-red { border-color: var(--red); background: #ffebe9; } .banner-amber { border-color: #d4a72c; background: #fff8c5; }
.card-wide { grid-column: 1 / -1; } .finding { margin: 4px 0; font-size: 1.05rem; }
pre.yaml { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; margin: 6px 0; overflow-x: auto; font-size: .9rem; user-select: all; -webkit-user-select: all; }
.codes { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px; margin-bottom: 10px; }
tr.needs-mapping td:first-child { border-left: 4px solid var(--amber); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 10px; }
.chart-card { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px; }
.chart-card figcaption { font-size: .95rem; margin-bottom: 2px; } .rejected-text { color: var(--amber); }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; } svg.chart .tick { font-size: 12px; fill: var(--muted); }
svg.chart .caption { font-size: 12px; font-weight: 600; fill: var(--ink); paint-order: stroke; stroke: #fff; stroke-width: 3px; }
svg.chart .bar { fill: #1f6feb; } svg.chart .bar-rejected { fill: var(--amber); } svg.chart .bar-delivered { fill: var(--green); }
svg.chart .backlog-area { fill: #ffebe9; } svg.chart .backlog-line { fill: none; stroke: var(--red); stroke-width: 2; }
details { margin: 6px 0; } summary { cursor: pointer; min-height: 32px; }
.empty, .never, .note { color: var(--muted); } ul.reasons { margin: 0; padding-left: 18px; }
.login { max-width: 420px; margin: 24px auto; } .login input { width: 100%; min-height: 44px; font: inherit; margin: 6px 0 12px; padding: 8px; }
.top-links { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; } .top-links a { color: #fff; } .who { opacity: .9; }
.configure .field { margin: 8px 0; display: flex; flex-direction: column; gap: 2px; max-width: 560px; }
.configure input, .configure select, .configure textarea { min-height: 40px; font: inherit; padding: 6px; border: 1px solid var(--line); border-radius: 6px; }
.configure textarea { font-family: ui-monospace, monospace; font-size: .9rem; }
.field-error input, .field-error select, .field-error textarea, tr.field-error input { border-color: var(--red); }
.field-problem { color: var(--red); display: block; } .suggestion { font-size: .85rem; margin-top: 2px; }
pre.diff { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow-x: auto; font-size: .85rem; }
.diff-add { background: #dafbe1; display: block; } .diff-del { background: #ffebe9; display: block; } .diff-keep, .diff-gap { display: block; color: var(--muted); }
ul.changes { padding-left: 18px; } ul.changes li { margin: 6px 0; } form.unlock { max-width: 420px; }
@media (max-width: 600px) { body { font-size: 15px; } main { padding: 6px; } .cards, .charts { grid-template-columns: 1fr; } th, td { padding: 5px 6px; } }
`;
