import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import ts from 'typescript';
import { loadConfig } from '../../src/config';
import { ROOT, readDoc, tables } from '../support/markdown';

// docs/configuration.md's reference table, .env.example and the configuration's own definition (src/config.ts)
// name the same variables with the same defaults, so that none can drift from the others.

type Default = { kind: 'value'; value: string } | { kind: 'unset' } | { kind: 'required' };

/**
 * How src/config.ts reads a variable: `helper(env, 'NAME', default, ...)`, the default always third and absent
 * when there is none. A helper not listed here fails the test, so that a new one is looked at before it is trusted.
 */
const HELPERS: Record<string, 'default-third' | 'required'> = {
  text: 'default-third',
  integer: 'default-third',
  url: 'default-third',
  addressList: 'default-third',
  schemeCap: 'default-third',
  readableFile: 'default-third',
  certificateAuthorities: 'default-third',
  required: 'required',
};
const VARIABLE_NAME = /^[A-Z][A-Z0-9_]+$/;

/** Each variable src/config.ts reads, with its default, read from the source's syntax tree. */
function configDefinition(): Map<string, Default> {
  const file = path.join(ROOT, 'src/config.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const scope = importedBindings(source);
  const variables = new Map<string, Default>();
  const record = (name: string, found: Default) => {
    const known = variables.get(name);
    if (!known || known.kind === 'unset') return void variables.set(name, found);
    if (found.kind !== 'unset' && JSON.stringify(found) !== JSON.stringify(known)) {
      throw new Error(`src/config.ts reads ${name} with two defaults: ${JSON.stringify(known)} and ${JSON.stringify(found)}`);
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.arguments.length >= 2 && ts.isIdentifier(node.arguments[0]) && /^env(ironment)?$/.test(node.arguments[0].text)
      && ts.isStringLiteral(node.arguments[1]) && VARIABLE_NAME.test(node.arguments[1].text)) {
      const helper = node.expression.getText(source);
      const name = node.arguments[1].text;
      if (!(helper in HELPERS)) throw new Error(`src/config.ts reads ${name} with ${helper}(), which this test does not know: add it to HELPERS`);
      if (HELPERS[helper] === 'required') record(name, { kind: 'required' });
      else if (node.arguments.length >= 3) record(name, { kind: 'value', value: String(evaluate(node.arguments[2], source, scope)) });
      else record(name, { kind: 'unset' });
    }
    // `env.NAME ?? fallback`
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken && ts.isPropertyAccessExpression(node.left)
      && ts.isIdentifier(node.left.expression) && node.left.expression.text === 'env' && VARIABLE_NAME.test(node.left.name.text)) {
      record(node.left.name.text, { kind: 'value', value: String(evaluate(node.right, source, scope)) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return variables;
}

/** The names src/config.ts imports from the service's own modules, bound to their built values (a default may be one). */
function importedBindings(source: ts.SourceFile): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const specifier = statement.moduleSpecifier.text;
    const bindings = statement.importClause?.namedBindings;
    if (!specifier.startsWith('.') || statement.importClause?.isTypeOnly || !bindings || !ts.isNamedImports(bindings)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const module = require(path.join(ROOT, 'dist/src', specifier)) as Record<string, unknown>;
    for (const element of bindings.elements) {
      if (!element.isTypeOnly) scope[element.name.text] = module[(element.propertyName ?? element.name).text];
    }
  }
  return scope;
}

/** A default as written (a literal, `86_400`, `CARD_GATEWAY_LIMITS.reads.perSecond`), evaluated against config.ts's imports. */
function evaluate(expression: ts.Expression, source: ts.SourceFile, scope: Record<string, unknown>): unknown {
  const names = Object.keys(scope);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(...names, `return (${expression.getText(source)});`)(...names.map((name) => scope[name]));
}

/** What the reference table says a default is: a code span holds the value; `unset`, `empty` and `required` say the rest. */
function documentedDefault(cell: string): Default | undefined {
  const code = /^`([^`]*)`$/.exec(cell);
  if (code) return { kind: 'value', value: code[1] };
  if (cell === 'empty') return { kind: 'value', value: '' };
  if (cell === 'unset') return { kind: 'unset' };
  if (cell === 'required') return { kind: 'required' };
  return undefined;
}

const referenceTables = () => tables(readDoc('docs/configuration.md')).filter((table) => table.header[0] === 'variable');

function reference(): Map<string, { cell: string; documented: Default | undefined }> {
  const rows = new Map<string, { cell: string; documented: Default | undefined }>();
  for (const row of referenceTables()[0]?.rows ?? []) {
    const name = /^`([A-Z][A-Z0-9_]+)`$/.exec(row[0])?.[1];
    if (!name) throw new Error(`docs/configuration.md: a row that names no single variable: ${row[0]}`);
    if (rows.has(name)) throw new Error(`docs/configuration.md names ${name} twice`);
    rows.set(name, { cell: row[1], documented: documentedDefault(row[1]) });
  }
  return rows;
}

/** Variables read from the environment outside src/config.ts (the demo, the progress lines): `env.NAME`, `process.env.NAME`. */
function variablesReadElsewhere(): Set<string> {
  /** Set by PM2 for each instance, never by the operator. */
  const notConfiguration = new Set(['NODE_APP_INSTANCE', 'NODE_ENV']);
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.ts') && file !== path.join(ROOT, 'src/config.ts')) {
        for (const match of fs.readFileSync(file, 'utf8').matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)\b|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) {
          const name = match[1] ?? match[2];
          if (!notConfiguration.has(name)) found.add(name);
        }
      }
    }
  };
  walk(path.join(ROOT, 'src'));
  return found;
}

function envExample(): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8').split('\n')) {
    const assignment = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (!assignment) continue;
    if (values.has(assignment[1])) throw new Error(`.env.example sets ${assignment[1]} twice`);
    values.set(assignment[1], assignment[2]);
  }
  return values;
}

const sorted = (names: Iterable<string>) => [...names].sort();

test('The parse of src/config.ts finds every variable loadConfig reads', (t) => {
  const read = new Set<string>();
  const environment = new Proxy({ DB_NAME: 'shop' } as Record<string, string | undefined>, {
    get(target, name) {
      if (typeof name === 'string' && VARIABLE_NAME.test(name)) read.add(name);
      return target[name as string];
    },
  });
  // NODE_EXTRA_CA_CERTS is read only when .env names it (from the real environment Node has read it itself).
  loadConfig(environment, new Set(['NODE_EXTRA_CA_CERTS']));
  t.deepEqual(sorted(configDefinition().keys()), sorted(read));
});

test('The configuration reference is one table', (t) => {
  t.is(referenceTables().length, 1, 'docs/configuration.md has one table headed "variable | default | meaning"');
  t.deepEqual(referenceTables()[0].header, ['variable', 'default', 'meaning']);
});

test('The configuration reference names every variable the service reads, and no other', (t) => {
  const expected = new Set([...configDefinition().keys(), ...variablesReadElsewhere()]);
  const documented = new Set(reference().keys());
  t.deepEqual(sorted([...expected].filter((name) => !documented.has(name))), [], 'read by the service but missing from docs/configuration.md');
  t.deepEqual(sorted([...documented].filter((name) => !expected.has(name))), [], 'in docs/configuration.md but read nowhere in src/');
});

test('The configuration reference gives each variable of src/config.ts its default there', (t) => {
  const documented = reference();
  const wrong: string[] = [];
  for (const [name, defined] of configDefinition()) {
    const row = documented.get(name);
    if (!row) continue; // reported by the test above
    const expected = defined.kind === 'value' ? (defined.value === '' ? 'empty' : `\`${defined.value}\``) : defined.kind;
    if (JSON.stringify(row.documented) !== JSON.stringify(defined)) wrong.push(`${name}: documented ${row.cell}, defined ${expected}`);
  }
  t.deepEqual(wrong, []);
});

test('Each default in the reference is a value in code, or one of unset, empty and required', (t) => {
  const unreadable = [...reference()].filter(([, row]) => !row.documented).map(([name, row]) => `${name}: ${row.cell}`);
  t.deepEqual(unreadable, []);
});

test('.env.example lists the variables of src/config.ts, each with its default or empty', (t) => {
  const example = envExample();
  const defined = configDefinition();
  t.deepEqual(sorted(example.keys()), sorted(defined.keys()));
  const differing = [...example].filter(([name, value]) => {
    const definition = defined.get(name);
    return value !== '' && !(definition?.kind === 'value' && definition.value === value);
  }).map(([name, value]) => `${name}=${value}`);
  t.deepEqual(differing, [], 'a value in .env.example that is not the default');
});
