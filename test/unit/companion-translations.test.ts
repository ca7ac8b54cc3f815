import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { LANGUAGES_DIR, LOCALES, parsePo, TEXT_DOMAIN, translatableStrings, translationFiles } from '../support/companion-translations';

for (const locale of LOCALES) {
  test(`${locale}: every string of the staff panels is translated`, (t) => {
    const catalog = parsePo(fs.readFileSync(path.join(LANGUAGES_DIR, `${TEXT_DOMAIN}-${locale}.po`), 'utf8'));
    const missing = translatableStrings().filter((id) => !catalog.messages.get(id));
    t.deepEqual(missing, [], 'strings without a translation in the .po');
    for (const [id, str] of catalog.messages) {
      const placeholders = (text: string) => (text.match(/%(\d\$)?[sd]/g) ?? []).sort().join(' ');
      t.is(placeholders(str), placeholders(id), `the same placeholders in "${id}"`);
    }
  });

  test(`${locale}: the files WordPress reads say what the .po says`, (t) => {
    for (const file of translationFiles(locale)) {
      const shipped = fs.readFileSync(path.join(LANGUAGES_DIR, file.name));
      t.true(shipped.equals(Buffer.from(file.content)), `${file.name} differs from the .po: npm run build && node dist/test/support/companion-translations.js`);
    }
  });
}
