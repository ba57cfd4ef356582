/**
 * The local PostgreSQL servers of the sandbox a8s operator, one per `Postgresql` object (`namespace/name`):
 * each with its own loopback address on port 5432 and its own folder under the operator's data folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../../runtime/core/logger.js';
import { LocalPostgresServer, type PostgresBinaries, type ServerExit, type ServerUser } from './local-postgres.js';
import { freeLoopbackAddress, releaseLoopbackAddress } from './loopback.js';
import { POSTGRES_PORT } from './types.js';

export interface LocalInstance {
  readonly key: string;
  server: LocalPostgresServer;
  /** The last unexpected exit of the server process (cleared once it runs again and that was reported). */
  lastExit?: ServerExit;
}

export interface LocalInstancesOptions {
  /** Folder that holds one sub-folder per instance. */
  readonly dataDir: string;
  readonly binaries: PostgresBinaries;
  readonly user?: ServerUser;
  /** @default 5432 (the a8s PostgreSQL port) */
  readonly port?: number;
  readonly logger?: Logger;
  /** Called (with the instance key) when a server process exits on its own. */
  readonly onUnexpectedExit?: (key: string) => void;
}

export class LocalInstances {
  private readonly byKey = new Map<string, LocalInstance>();
  private readonly log: Logger;
  private templatePromise: Promise<LocalPostgresServer> | undefined;

  constructor(private readonly opts: LocalInstancesOptions) {
    this.log = opts.logger ?? silentLogger;
  }

  get port(): number {
    return this.opts.port ?? POSTGRES_PORT;
  }

  get binaries(): PostgresBinaries {
    return this.opts.binaries;
  }

  get(key: string): LocalInstance | undefined {
    return this.byKey.get(key);
  }

  list(): Array<{ key: string; address: string; pid: number | undefined; dir: string }> {
    return [...this.byKey.values()].map((i) => ({ key: i.key, address: i.server.address, pid: i.server.pid, dir: i.server.dir }));
  }

  /** The instance of `key`, created (address picked, initdb run) when new. */
  async ensure(key: string): Promise<LocalInstance> {
    const have = this.byKey.get(key);
    if (have) return have;
    const address = await freeLoopbackAddress(this.port, this.takenAddresses());
    const inst: LocalInstance = { key, server: this.newServer(key, address) };
    this.byKey.set(key, inst);
    try {
      await inst.server.initFrom(await this.template());
    } catch (e) {
      this.byKey.delete(key);
      releaseLoopbackAddress(address, this.port);
      throw e;
    }
    return inst;
  }

  /**
   * One initdb'd folder, never started, that new instances copy (a copy takes a fraction of initdb's seconds).
   * Made once, on first use or by warm().
   */
  template(): Promise<LocalPostgresServer> {
    if (!this.templatePromise) {
      const t = new LocalPostgresServer({
        dir: path.join(this.opts.dataDir, '.template'),
        address: '127.0.0.1',
        port: this.port,
        binaries: this.opts.binaries,
        ...(this.opts.user ? { user: this.opts.user } : {}),
        logger: this.log,
      });
      this.templatePromise = t.init().then(
        () => t,
        (e) => {
          this.templatePromise = undefined;
          throw e;
        },
      );
    }
    return this.templatePromise;
  }

  /** Makes the template now (in the background of a start-up). */
  warm(): void {
    this.template().catch((e) => this.log.warn({ err: (e as Error).message }, 'could not prepare the PostgreSQL template folder'));
  }

  /** Moves a (stopped) instance to another free loopback address (its address was taken by another process). */
  async moveAddress(key: string): Promise<LocalInstance> {
    const inst = this.byKey.get(key);
    if (!inst) throw new Error(`no local instance ${key}`);
    await inst.server.stop();
    const taken = this.takenAddresses();
    const old = inst.server.address;
    taken.add(old);
    inst.server = this.newServer(key, await freeLoopbackAddress(this.port, taken));
    releaseLoopbackAddress(old, this.port);
    return inst;
  }

  /** Stops the server of `key` and removes its folder. */
  async destroy(key: string): Promise<void> {
    const inst = this.byKey.get(key);
    if (inst) {
      await inst.server.destroy();
      this.byKey.delete(key);
      releaseLoopbackAddress(inst.server.address, this.port);
      this.log.info({ instance: key }, 'local PostgreSQL server stopped, data removed');
    }
    fs.rmSync(this.dirOf(key), { recursive: true, force: true });
  }

  /** Stops every server and removes every instance folder and the template. */
  async destroyAll(): Promise<void> {
    await Promise.all([...this.byKey.keys()].map((k) => this.destroy(k)));
    await this.templatePromise?.catch(() => undefined);
    this.templatePromise = undefined;
    fs.rmSync(path.join(this.opts.dataDir, '.template'), { recursive: true, force: true });
  }

  private dirOf(key: string): string {
    return path.join(this.opts.dataDir, key.replace('/', '_'));
  }

  private takenAddresses(): Set<string> {
    return new Set([...this.byKey.values()].map((i) => i.server.address));
  }

  private newServer(key: string, address: string): LocalPostgresServer {
    const server: LocalPostgresServer = new LocalPostgresServer({
      dir: this.dirOf(key),
      address,
      port: this.port,
      binaries: this.opts.binaries,
      ...(this.opts.user ? { user: this.opts.user } : {}),
      logger: this.log.child({ instance: key }),
      onUnexpectedExit: (e) => {
        const inst = this.byKey.get(key);
        if (inst && inst.server === server) inst.lastExit = e;
        this.opts.onUnexpectedExit?.(key);
      },
    });
    return server;
  }
}
