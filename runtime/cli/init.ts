// `klutch-kit init [dir] [--layout esm|cjs | --pulumi]`: the smallest project that synthesizes a Klutch
// topology with klutch-kit — package.json (klutch-kit, its cdk8s peers, TypeScript and @types/node),
// tsconfig.json and main.ts; `--layout cjs` is the layout of `cdk8s init typescript-app` (CommonJS, ts-node,
// cdk8s.yaml). `--pulumi` writes a Pulumi TypeScript project instead (Pulumi.yaml, CommonJS under ts-node as
// Pulumi's template is) whose index.ts deploys the topology with klutch-kit/stacks' Topology component.
// README.md "Start a project" shows these files byte for byte (test/runtime/cli/init.test.ts and
// `npm run test:package` compare them, and the package test installs and runs every layout).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { UsageError } from './errors.js';

export type InitLayout = 'esm' | 'cjs' | 'pulumi';
/** The cdk8s layouts, `--layout`'s choices. */
export const CDK8S_LAYOUTS: readonly InitLayout[] = ['esm', 'cjs'];
/** Every layout: the cdk8s ones and `pulumi` (`--pulumi`). */
export const INIT_LAYOUTS: readonly InitLayout[] = [...CDK8S_LAYOUTS, 'pulumi'];

/** One file `init` writes. */
export interface InitFile {
  readonly path: string;
  readonly content: string;
}

/** The version ranges written into the new package.json. */
export interface InitVersions {
  readonly 'klutch-kit': string;
  readonly cdk8s: string;
  readonly 'cdk8s-plus-28': string;
  readonly constructs: string;
  readonly typescript: string;
  readonly '@types/node': string;
  /** `cjs` only. */
  readonly 'cdk8s-cli': string;
  /** `cjs` and `pulumi`. */
  readonly 'ts-node': string;
  /** `pulumi` only. */
  readonly '@pulumi/pulumi': string;
  /** `pulumi` only. */
  readonly '@pulumi/kubernetes': string;
}

interface OwnPackage {
  name?: string;
  version?: string;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** klutch-kit's own package.json (found by walking up from this file, so it works from lib/ too). */
function ownPackage(): OwnPackage {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const f = path.join(dir, 'package.json');
    if (fs.existsSync(f)) {
      const pkg = JSON.parse(fs.readFileSync(f, 'utf8')) as OwnPackage;
      if (pkg.name === 'klutch-kit') return pkg;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`init: cannot find klutch-kit's package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/**
 * The ranges of this klutch-kit: itself (`^<version>`), its peers as it declares them (cdk8s and the Pulumi SDKs),
 * and the TypeScript, @types/node, cdk8s-cli and ts-node it is built and tested with.
 */
export function initVersions(pkg: OwnPackage = ownPackage()): InitVersions {
  const pick = (from: Record<string, string> | undefined, name: string, field: string): string => {
    const v = from?.[name];
    if (!v) throw new Error(`init: klutch-kit's package.json has no ${field}["${name}"]`);
    return v;
  };
  return {
    'klutch-kit': `^${pkg.version ?? '0.0.0'}`,
    cdk8s: pick(pkg.peerDependencies, 'cdk8s', 'peerDependencies'),
    'cdk8s-plus-28': pick(pkg.peerDependencies, 'cdk8s-plus-28', 'peerDependencies'),
    constructs: pick(pkg.peerDependencies, 'constructs', 'peerDependencies'),
    typescript: pick(pkg.devDependencies, 'typescript', 'devDependencies'),
    '@types/node': pick(pkg.devDependencies, '@types/node', 'devDependencies'),
    'cdk8s-cli': pick(pkg.devDependencies, 'cdk8s-cli', 'devDependencies'),
    'ts-node': pick(pkg.devDependencies, 'ts-node', 'devDependencies'),
    '@pulumi/pulumi': pick(pkg.peerDependencies, '@pulumi/pulumi', 'peerDependencies'),
    '@pulumi/kubernetes': pick(pkg.peerDependencies, '@pulumi/kubernetes', 'peerDependencies'),
  };
}

/** The npm package name for a project folder: its base name, lower case, other characters as `-`. */
export function projectName(dir: string): string {
  const name = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '');
  return name === '' ? 'klutch-topology' : name.slice(0, 214);
}

/** main.ts, the same for both layouts: no top-level await, which CommonJS does not have (TS1378). */
const MAIN_TS = `import { App } from 'cdk8s';
import { AppCluster, ControlPlaneCluster, synthTopology } from 'klutch-kit';

const app = new App();
// The control plane: Crossplane, the whole Klutch catalogue, the bind backend and Dex (GitHub login).
const controlPlane = new ControlPlaneCluster(app, 'ControlPlane', {
  host: 'bind.example.com',
  anynines: { baseDomain: 'a9s.example.com' },
  dex: {
    connectors: [
      {
        type: 'github',
        id: 'github',
        name: 'GitHub',
        config: { clientID: '$GITHUB_CLIENT_ID', clientSecret: '$GITHUB_CLIENT_SECRET', redirectURI: 'https://bind.example.com/dex/callback' },
        secretEnv: { GITHUB_CLIENT_ID: { name: 'dex-github', key: 'client-id' }, GITHUB_CLIENT_SECRET: { name: 'dex-github', key: 'client-secret' } },
      },
    ],
  },
});
// An app cluster bound to it, with one claim: an a8s PostgreSQL.
const shop = new AppCluster(app, 'Shop', { clusterName: 'app-shop', controlPlane });
shop.addClaim({
  kind: 'PostgresqlInstance',
  name: 'orders-db',
  namespace: 'shop',
  spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', compositionRef: { name: 'a8s-postgresql' } },
});

// No top-level await: the same file runs as an ES module and as CommonJS (cdk8s init).
synthTopology(app).then(
  (result) => {
    for (const c of result.clusters) console.log(\`dist/\${c.name}/: \${c.objects} objects\`);
  },
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
`;

/** Pulumi.yaml of the `pulumi` layout: no default kubernetes provider, so nothing lands on the ambient kubectl context. */
const pulumiYaml = (name: string) => `name: ${name}
description: A Klutch control plane and an app cluster bound to it, deployed by klutch-kit's Topology component
runtime:
  name: nodejs
  options:
    packagemanager: npm
config:
  # Every resource uses its cluster's own provider (from the kubeconfig-<cluster> secrets), never the kubectl context.
  pulumi:disable-default-providers:
    value:
      - kubernetes
`;

/** index.ts of the `pulumi` layout: CommonJS under ts-node, as Pulumi's TypeScript template. */
const INDEX_TS = `// klutch-kit's Topology component deploys a Klutch control plane (Crossplane, the catalogue, the bind backend,
// Dex) and an app cluster bound to it (the konnector) into two clusters you have. Stack config, each set with
// \`pulumi config set [--secret] <key> <value>\` (every key: docs/pulumi.md in klutch-kit's repository):
//   kubeconfig-control-plane, kubeconfig-app-shop  secret: the clusters' kubeconfigs (\`--secret … < file\`)
//   oidcClientSecret, cookieSigningKey             secret: the bind backend's (\`openssl rand -base64 32\`)
//   oidc or dexConnectors                          who logs in: your issuer (\`--path oidc.issuerUrl https://…\`),
//                                                  or Dex on the control plane with these connectors
//   images                                         klutch-kit's default images are not published: set
//                                                  \`--path images.registry <registry>/<prefix>\` (built, pushed
//                                                  there) or images.backend/konnector (\`klutch-kit image build --push\`)
//   manifests, skipAwait                           \`runtime\`: the binding runtime only, for clusters without Crossplane
import * as pulumi from '@pulumi/pulumi';
import { RuntimeImages, StackConfigError, Topology, parseStackConfig, readStackSecrets, type ClusterConnection } from 'klutch-kit/stacks';

const cfg = new pulumi.Config();

async function program() {
  let config = parseStackConfig({
    controlPlane: { name: 'control-plane' },
    appClusters: [{ name: 'app-shop' }],
    backend: { url: 'https://bind.example.com' },
    oidc: cfg.getObject('oidc'),
    dexConnectors: cfg.getObject('dexConnectors'),
    images: cfg.getObject('images'),
    manifests: cfg.get('manifests'),
    skipAwait: cfg.get('skipAwait'),
  });
  // images.registry: build the backend and konnector images (no Docker), push them, deploy them by digest; only the
  // objects naming them wait for the push (imagePins)
  const { registry, base, platforms } = config.images;
  const images = registry ? new RuntimeImages('klutch-runtime-images', { registry, ...(base ? { base } : {}), ...(platforms ? { platforms } : {}) }) : undefined;
  if (images) config = { ...config, images: { ...config.images, ...images.tags } };
  const connections: Record<string, ClusterConnection> = {};
  for (const c of [config.controlPlane, ...config.appClusters]) connections[c.name] = { kubeconfig: cfg.requireSecret(\`kubeconfig-\${c.name}\`) };
  const topology = new Topology('klutch', {
    config,
    connections,
    secrets: readStackSecrets(cfg),
    ...(images ? { imagePins: images.pins() } : {}),
  });
  if (images) await images.refs; // a failed build fails the program with its message
  return { backendUrl: topology.backendUrl, bindCommands: topology.bindCommands };
}

// A bad config value stops the preview with one line naming the key and the value, not a stack trace.
export = () =>
  program().catch((e: unknown) => {
    throw e instanceof StackConfigError ? new pulumi.RunError(e.message) : e;
  });
`;

const VALIDATE = 'klutch-kit validate dist/control-plane && klutch-kit validate dist/app-shop --schemas dist/control-plane';

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

/** The files of a new project, in the order README.md shows them. */
/** The compiler options of the CommonJS layouts (cdk8s `cjs` and Pulumi), which differ only in their output folder. */
const cjsCompilerOptions = (outDir: string) => ({
  target: 'ES2022',
  module: 'CommonJS',
  moduleResolution: 'node10',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  outDir,
});

export function initFiles(layout: InitLayout, name: string, v: InitVersions = initVersions()): InitFile[] {
  if (!INIT_LAYOUTS.includes(layout)) throw new UsageError(`init: --layout ${JSON.stringify(layout)} is not one of ${INIT_LAYOUTS.join(', ')}`);
  const deps = { cdk8s: v.cdk8s, 'cdk8s-plus-28': v['cdk8s-plus-28'], constructs: v.constructs, 'klutch-kit': v['klutch-kit'] };
  if (layout === 'pulumi') {
    return [
      { path: 'Pulumi.yaml', content: pulumiYaml(name) },
      {
        path: 'package.json',
        content: json({
          name,
          version: '0.1.0',
          private: true,
          main: 'index.ts',
          scripts: { typecheck: 'tsc --noEmit', preview: 'pulumi preview', up: 'pulumi up' },
          dependencies: { '@pulumi/kubernetes': v['@pulumi/kubernetes'], '@pulumi/pulumi': v['@pulumi/pulumi'], ...deps },
          devDependencies: { '@types/node': v['@types/node'], 'ts-node': v['ts-node'], typescript: v.typescript },
        }),
      },
      {
        path: 'tsconfig.json',
        content: json({ compilerOptions: cjsCompilerOptions('bin'), files: ['index.ts'] }),
      },
      { path: 'index.ts', content: INDEX_TS },
    ];
  }
  if (layout === 'esm') {
    return [
      {
        path: 'package.json',
        content: json({
          name,
          version: '0.1.0',
          private: true,
          type: 'module',
          scripts: { synth: 'tsc && node build/main.js', validate: VALIDATE },
          dependencies: deps,
          devDependencies: { '@types/node': v['@types/node'], typescript: v.typescript },
        }),
      },
      {
        path: 'tsconfig.json',
        content: json({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2023'],
            types: ['node'],
            strict: true,
            outDir: 'build',
          },
          include: ['*.ts'],
        }),
      },
      { path: 'main.ts', content: MAIN_TS },
    ];
  }
  return [
    {
      path: 'package.json',
      content: json({
        name,
        version: '0.1.0',
        private: true,
        scripts: { synth: 'cdk8s synth', validate: VALIDATE },
        dependencies: deps,
        devDependencies: {
          '@types/node': v['@types/node'],
          'cdk8s-cli': v['cdk8s-cli'],
          'ts-node': v['ts-node'],
          typescript: v.typescript,
        },
      }),
    },
    {
      path: 'tsconfig.json',
      content: json({ compilerOptions: cjsCompilerOptions('build'), include: ['*.ts'] }),
    },
    { path: 'main.ts', content: MAIN_TS },
    { path: 'cdk8s.yaml', content: 'language: typescript\napp: npx ts-node main.ts\n' },
  ];
}

/** Writes the project into `dir` (created when missing); refuses to overwrite any file, naming them. */
export function initProject(dir: string, layout: InitLayout, versions?: InitVersions): InitFile[] {
  const files = initFiles(layout, projectName(dir), versions);
  const existing = files.filter((f) => fs.existsSync(path.join(dir, f.path))).map((f) => path.join(dir, f.path));
  if (existing.length > 0) throw new UsageError(`init: ${existing.join(', ')} already exist(s); init writes only into a folder without them`);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(dir, f.path), f.content);
  return files;
}

export function initCommand(): Command {
  const cmd = new Command('init')
    .description('create a minimal project that synthesizes a Klutch topology (package.json, tsconfig.json, main.ts), or with --pulumi one that deploys it')
    .argument('[dir]', 'the project folder (default: the current folder)')
    .addOption(
      new Option('--layout <layout>', 'esm: an ES module project (tsc, node); cjs: the cdk8s init typescript-app layout (CommonJS, ts-node, cdk8s synth)')
        .choices([...CDK8S_LAYOUTS])
        .default('esm'),
    )
    .option('--pulumi', "a Pulumi TypeScript project instead (Pulumi.yaml, index.ts): klutch-kit/stacks' Topology component, pulumi preview / up", false);
  return cmd.action((dir: string | undefined, opts: { layout: InitLayout; pulumi: boolean }) => {
    if (opts.pulumi && cmd.getOptionValueSource('layout') === 'cli') {
      throw new UsageError(
        `init: --pulumi and --layout ${opts.layout} exclude each other: --layout chooses a cdk8s project, --pulumi a Pulumi project; drop one of them`,
      );
    }
    const layout: InitLayout = opts.pulumi ? 'pulumi' : opts.layout;
    const target = dir ?? '.';
    const files = initProject(target, layout);
    const cd = dir ? `cd ${dir} && ` : '';
    process.stdout.write(
      `wrote ${files.map((f) => path.join(target, f.path)).join(', ')} (${layout} layout)\n` +
        (layout === 'pulumi'
          ? `next: ${cd}npm install && npm run typecheck, then set the stack config index.ts names and run pulumi preview\n`
          : `next: ${cd}npm install && npm run synth && npm run validate\n`),
    );
  });
}
