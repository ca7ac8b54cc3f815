import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { NEEDED_PRIVILEGES } from '../../src/data-access/installation-repository';
import { ROOT, codeBlocks, documentationFiles, headingAnchors, links, readDoc } from '../support/markdown';

// The README and docs/: links that reach their file and heading, the database privileges as doctor checks them,
// and no command an operator would paste that neither the tests nor CI run, unless it says it is an example.

test('Every relative link in the README and docs/ reaches an existing file, and a heading there', (t) => {
  const broken: string[] = [];
  for (const file of documentationFiles()) {
    for (const { target, line } of links(readDoc(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [linkPath, anchor] = target.split('#', 2);
      const resolved = linkPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(linkPath)));
      const where = `${file}:${line} → ${target}`;
      if (resolved.startsWith('..') || !fs.existsSync(path.join(ROOT, resolved))) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readDoc(resolved)).has(anchor)) {
        broken.push(`${where}: no such heading in ${resolved}`);
      }
    }
  }
  t.deepEqual(broken, []);
});

test('The operator\'s guide lists the database privileges doctor checks, in its text and in its GRANT', (t) => {
  const guide = readDoc('docs/operators-guide.md');
  t.true(guide.includes(NEEDED_PRIVILEGES.map((privilege) => `\`${privilege}\``).join(', ')), 'the list in the text');
  t.true(guide.includes(`GRANT ${NEEDED_PRIVILEGES.join(', ')} ON`), 'the GRANT example');
});

/**
 * The commands the tests or CI run, each with where: the file and what in it runs the command. A command in the
 * docs that is not one of these says `# example` (on its line, or as its block's first line).
 */
const COMMANDS_RUN: Record<string, { file: string; runs: RegExp }> = {
  'npm ci': { file: '.ci/run', runs: /^npm ci\b/m },
  'npm test': { file: '.ci/run', runs: /^\s*(PATH=\S+ )?npm test$/m },
  'npm run test:woocommerce': { file: '.ci/run', runs: /^npm run test:woocommerce$/m },
  'npm run build': { file: 'package.json', runs: /"test": "npm run build && ava"/ },
  'npm run migrate': { file: 'test/cli/migrate-progress.test.ts', runs: /runCommand\('npm', \['run', '--silent', 'migrate'\]/ },
  'npm run api': { file: 'test/support/service-process.ts', runs: /\.scripts\[script\]/ },
  'npm run worker': { file: 'test/support/service-process.ts', runs: /\.scripts\[script\]/ },
  'npm start': { file: 'test/pm2/npm-start.test.ts', runs: /pm2\.npmStart\(\)/ },
  'npm run reload': { file: 'test/pm2/npm-start.test.ts', runs: /npmRun\('reload'/ },
  'npx payment-hub doctor': { file: 'test/cli/doctor.test.ts', runs: /cli\(\['doctor'/ },
  'npm run order-number-index -- status': { file: 'test/cli/maintenance-commands.test.ts', runs: /'cli\/order-number-index\.js', \['status'\]/ },
  'npm run order-number-index -- add': { file: 'test/cli/maintenance-commands.test.ts', runs: /'cli\/order-number-index\.js', \['add'\]/ },
  'npm run order-number-index -- remove': { file: 'test/cli/maintenance-commands.test.ts', runs: /'cli\/order-number-index\.js', \['remove'\]/ },
  'chmod 600 .env': { file: 'test/cli/operator-environment.test.ts', runs: /execFile\('chmod', \['600', '\.env'\], \{ cwd: folder \}/ },
};

/** Shell and SQL blocks hold commands; the others (nginx, js, ts, json) hold configuration and code. */
const COMMENT: Record<string, string> = { sh: '#', bash: '#', shell: '#', console: '#', sql: '--' };

test('Each command the tests or CI are said to run is run there', (t) => {
  for (const [command, { file, runs }] of Object.entries(COMMANDS_RUN)) {
    t.regex(fs.readFileSync(path.join(ROOT, file), 'utf8'), runs, `${command}: ${file}`);
  }
});

test('Every command in the README and docs/ is run by the tests or CI, or marked as an example', (t) => {
  const unmarked: string[] = [];
  for (const file of documentationFiles()) {
    for (const block of codeBlocks(readDoc(file))) {
      const comment = COMMENT[block.language];
      if (!comment) continue;
      const firstLine = block.lines.find((line) => line.trim() !== '')?.trim() ?? '';
      if (firstLine.startsWith(comment) && /^(#|--)\s*examples?\b/i.test(firstLine)) continue;
      let continued = false;
      block.lines.forEach((raw, index) => {
        const wasContinued = continued;
        continued = raw.trimEnd().endsWith('\\');
        let line = raw.trim();
        if (wasContinued || line === '' || line.startsWith(comment)) return;
        if (block.language === 'console') {
          if (!line.startsWith('$ ')) return; // what the command printed
          line = line.slice(2);
        }
        if (new RegExp(`${comment}\\s*examples?\\b`, 'i').test(line)) return;
        const command = line.replace(new RegExp(`\\s+${comment}\\s.*$`), '').trim();
        if (!(command in COMMANDS_RUN)) unmarked.push(`${file}:${block.line + 1 + index}: ${command}`);
      });
    }
  }
  t.deepEqual(unmarked, []);
});
