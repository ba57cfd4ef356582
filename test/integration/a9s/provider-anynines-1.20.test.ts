// @realinfra late (provider-anynines, Crossplane 1.20: built in the background on a new machine; scripts/_lanes.ts)
/**
 * The a9s PostgreSQL path of provider-anynines.test.ts on Crossplane 1.20: provider-anynines installed by the
 * 1.20 package manager, the constructs' ProviderConfig healthy, claim → broker provision → Ready, binding →
 * a real login, deletion → unbind and deprovision. provider-anynines is built from klutchio sources fetched with git
 * (a local stand-in of klutchio's public repository, _klutchio-git.ts), the path a user's machine takes, not from the
 * mirror folder CI names in KLUTCH_KIT_KLUTCHIO_SRC.
 */
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { NS, claimOf, condition, waitFor } from '../crossplane/_support.js';
import { type A9sCluster, bindingSecret, startA9sCluster } from './_support.js';
import { type KlutchioFromGit, klutchioFromGitStandIn } from './_klutchio-git.js';

const GROUP = 'anynines.com/v1';
const A9S = 'dataservices.anynines.com/v1';
let env: A9sCluster;
let klutchio: KlutchioFromGit;

beforeAll(async () => {
  klutchio = await klutchioFromGitStandIn();
  env = await startA9sCluster('a9s-120', '1.20', { klutchioDir: klutchio.dir });
}, 900_000);

afterAll(async () => {
  await env?.stop();
  klutchio?.cleanup();
}, 120_000);

it('the klutchio sources came through the git path: a checkout of the stand-in commit, not the mirror', () => {
  expect(klutchio.dir).not.toBe(process.env['KLUTCH_KIT_KLUTCHIO_SRC']);
  expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: klutchio.dir, encoding: 'utf8' }).trim()).toBe(klutchio.pin.commit);
  expect(klutchio.pin.repository).toMatch(/^file:\/\//);
});

it('Crossplane 1.20: provider-anynines installed; a9s PostgreSQL claim → Ready → binding → a real login → deletion, nothing left', async () => {
  expect(condition(await env.api.get('pkg.crossplane.io/v1', 'Provider', 'provider-anynines'), 'Installed')?.status).toBe('True');
  await waitFor('ProviderConfig postgresql-service-broker healthy', async () =>
    (await env.api.get(A9S, 'ProviderConfig', 'postgresql-service-broker'))?.status?.health?.lastStatus === true ? true : undefined,
  );
  const s = env.services.find((x) => x.ds === 'postgresql')!;
  const svc = s.services[s.services.length - 1]!;
  const broker = env.brokers.get('postgresql')!;
  const t0 = Date.now();
  await env.api.create(
    claimOf(s.claimKind, 'pg-vm', { service: svc.name, plan: svc.plans[0]!, ...(s.compositionRef ? { compositionRef: s.compositionRef } : {}) }),
  );
  await waitFor(
    'claim pg-vm Ready',
    async () => (condition(await env.api.get(GROUP, s.claimKind, 'pg-vm', NS), 'Ready')?.status === 'True' ? true : undefined),
    240_000,
  );
  process.stdout.write(`a9s PostgreSQL claim → Ready on Crossplane 1.20: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  const [inst] = broker.instances();
  expect(inst!.state).toBe('provisioned');
  await env.api.create(
    claimOf('ServiceBinding', 'pg-creds', { serviceInstanceType: 'postgresql', instanceRef: 'pg-vm', compositionRef: { name: 'a9s-servicebinding' } }),
  );
  const secret = await bindingSecret(env.api, 'pg-creds-creds', 'uri');
  expect(secret.type).toBe('connection.crossplane.io/v1alpha1');
  const c = new pg.Client({ connectionString: secret.data['uri'] });
  await c.connect();
  expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  await c.end();
  await env.api.delete(GROUP, 'ServiceBinding', 'pg-creds', NS);
  await waitFor('unbound at the broker', async () => (inst!.bindings.size === 0 ? true : undefined), 180_000);
  await env.api.delete(GROUP, s.claimKind, 'pg-vm', NS);
  await waitFor('deprovisioned at the broker', async () => (inst!.state === 'deleted' ? true : undefined), 180_000);
  await waitFor('no ServiceInstance left', async () => ((await env.api.list(A9S, 'ServiceInstance')).length === 0 ? true : undefined), 180_000);
}, 900_000);
