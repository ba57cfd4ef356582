// Certificates for a throwaway cluster: one CA per cluster, a serving certificate for kube-apiserver
// (127.0.0.1 / localhost), an admin client certificate in system:masters, and a service-account
// signing key. Certificates are made with the `openssl` command (OpenSSL >= 3.0); keys are ECDSA P-256.
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface ClusterPki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  /** ECDSA private key (PKCS#8 PEM) used to sign and verify service-account tokens. */
  readonly serviceAccountKey: string;
  /** The matching public key (SPKI PEM), for `--service-account-key-file`. */
  readonly serviceAccountPublicKey: string;
  readonly caPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
}

const OPENSSL_CNF = `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

async function openssl(args: string[], what: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { timeout: 30_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') {
      throw new Error(`realinfra: the "openssl" command (OpenSSL >= 3.0) is needed to make the cluster certificates but was not found on PATH`, { cause: e });
    }
    throw new Error(`realinfra: openssl failed while making the ${what}: ${(err.stderr ?? err.message).trim()}`, { cause: e });
  }
}

/** Creates the PKI of one cluster in `dir` (created if missing). */
export async function createClusterPki(dir: string, clusterName: string): Promise<ClusterPki> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = (f: string) => path.join(dir, f);
  const cnf = p('openssl.cnf');
  fs.writeFileSync(cnf, OPENSSL_CNF);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-config',
      cnf,
      '-extensions',
      'ca',
      ...ec,
      '-keyout',
      p('ca.key'),
      '-out',
      p('ca.crt'),
      '-days',
      '3650',
      '-subj',
      `/CN=klutch-kit-${clusterName}-ca`,
    ],
    'cluster CA',
  );
  const leaf = (ext: string, base: string, subj: string, days: string) =>
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-config',
        cnf,
        '-extensions',
        ext,
        ...ec,
        '-CA',
        p('ca.crt'),
        '-CAkey',
        p('ca.key'),
        '-keyout',
        p(`${base}.key`),
        '-out',
        p(`${base}.crt`),
        '-days',
        days,
        '-subj',
        subj,
      ],
      `${base} certificate`,
    );
  await Promise.all([leaf('server', 'apiserver', '/CN=kube-apiserver', '825'), leaf('client', 'admin', '/O=system:masters/CN=klutch-kit-admin', '825')]);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  fs.writeFileSync(p('sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  fs.writeFileSync(p('sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPublicKey: p('sa.pub'),
    caPem: fs.readFileSync(p('ca.crt'), 'utf8'),
    adminCertPem: fs.readFileSync(p('admin.crt'), 'utf8'),
    adminKeyPem: fs.readFileSync(p('admin.key'), 'utf8'),
  };
}

/** A client certificate signed by the cluster CA (files `<base>.crt` / `<base>.key` in the PKI folder). */
export interface ClientCertificate {
  readonly cert: string;
  readonly key: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * Issues a client certificate with the given subject, e.g. `/O=system:nodes/CN=system:node:node-1` for a
 * kubelet (the Node authorizer's identity) or `/CN=system:kube-scheduler`.
 */
export async function createClientCertificate(pki: ClusterPki, base: string, subject: string): Promise<ClientCertificate> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(base)) throw new Error(`createClientCertificate: base must be a file name stem, got ${JSON.stringify(base)}`);
  const p = (f: string) => path.join(pki.dir, f);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-config',
      p('openssl.cnf'),
      '-extensions',
      'client',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-CA',
      pki.caCert,
      '-CAkey',
      pki.caKey,
      '-keyout',
      p(`${base}.key`),
      '-out',
      p(`${base}.crt`),
      '-days',
      '825',
      '-subj',
      subject,
    ],
    `${base} certificate`,
  );
  return {
    cert: p(`${base}.crt`),
    key: p(`${base}.key`),
    certPem: fs.readFileSync(p(`${base}.crt`), 'utf8'),
    keyPem: fs.readFileSync(p(`${base}.key`), 'utf8'),
  };
}
