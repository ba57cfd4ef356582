import { controllerReadiness } from '../../../runtime/backend/readiness.js';

const controllers = (synced: boolean) => ({ hasSynced: () => synced });

describe('controllerReadiness: what /readyz says about the controllers', () => {
  it('without controllers (--no-controllers) a replica is ready', () => {
    expect(controllerReadiness(undefined, undefined)).toEqual({ ready: true, controllersSynced: true });
    expect(controllerReadiness(undefined, { isLeader: true })).toEqual({ ready: true, controllersSynced: true });
  });

  it('without leader election the one replica is ready once its controllers have synced', () => {
    expect(controllerReadiness(controllers(false), undefined)).toEqual({ ready: false, controllersSynced: false });
    expect(controllerReadiness(controllers(true), undefined)).toEqual({ ready: true, controllersSynced: true });
  });

  it('a standby is ready; it runs no controllers, so none are pending', () => {
    expect(controllerReadiness(controllers(false), { isLeader: false })).toEqual({ ready: true, controllersSynced: true });
  });

  it('a replica that becomes the leader stays ready while its new controllers sync, and says they are pending', () => {
    const elector = { isLeader: false };
    const c = {
      synced: false,
      hasSynced() {
        return this.synced;
      },
    };
    expect(controllerReadiness(c, elector).ready).toBe(true);
    elector.isLeader = true; // took over: controllers started, informers listing
    expect(controllerReadiness(c, elector)).toEqual({ ready: true, controllersSynced: false });
    c.synced = true;
    expect(controllerReadiness(c, elector)).toEqual({ ready: true, controllersSynced: true });
  });
});
