// A process that saves the instruments file once (config-versions.ts) and, asked to, SIGKILLs itself between the fsync
// of the new text and the rename: the crash test's power cut at the worst instant. Test-only (dist/test/support/):
//   node dist/test/support/config-save-child.js FILE TEXT EXPECTED-VERSION [kill-before-rename]
import { ConfigVersions } from '../../src/config/config-versions.js';

const [file, text, expected, fault] = process.argv.slice(2);
if (!file || text === undefined || !expected) {
  process.stderr.write('usage: node config-save-child.js FILE TEXT EXPECTED-VERSION [kill-before-rename]\n');
  process.exitCode = 2;
} else {
  const killBeforeRename = fault === 'kill-before-rename' ? () => void process.kill(process.pid, 'SIGKILL') : undefined;
  const versions = new ConfigVersions({ file, now: () => Date.now(), ...(killBeforeRename ? { beforeRename: killBeforeRename } : {}) });
  const outcome = await versions.save(text, expected);
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}
