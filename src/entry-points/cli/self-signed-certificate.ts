import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** A self-signed certificate for 127.0.0.1/localhost in `dir`, made with openssl once and reused. */
export function selfSignedCertificate(dir: string): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, 'localhost.crt');
  const keyFile = path.join(dir, 'localhost.key');
  if (!fs.existsSync(certFile) || !fs.existsSync(keyFile)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '825', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', keyFile, '-out', certFile,
    ], { stdio: 'ignore' });
  }
  return { certFile, keyFile };
}
