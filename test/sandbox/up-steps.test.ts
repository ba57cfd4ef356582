/**
 * sandbox/sandbox.ts UpSteps: when the engine's summary of `pulumi up` may be taken for a successful update (every step
 * that began ended with its outputs, none failed), so the sandbox goes on before the automation API's reads are through.
 */
import { describe, expect, it } from '@jest/globals';
import type { EngineEvent } from '@pulumi/pulumi/automation/index.js';
import { UpSteps } from '../../sandbox/sandbox.js';

const meta = (op: string, urn: string) => ({ op, urn, type: 'kubernetes:core/v1:Namespace', provider: '' });
const pre = (op: string, urn: string) => ({ sequence: 0, timestamp: 0, resourcePreEvent: { metadata: meta(op, urn) } }) as unknown as EngineEvent;
const outputs = (op: string, urn: string) => ({ sequence: 0, timestamp: 0, resOutputsEvent: { metadata: meta(op, urn) } }) as unknown as EngineEvent;
const urn = (name: string) => `urn:pulumi:sandbox::klutch-kit::kubernetes:core/v1:Namespace::${name}`;

describe('UpSteps', () => {
  it('succeeded once every step that began ended with its outputs', () => {
    const s = new UpSteps();
    expect(s.succeeded()).toBe(true);
    s.see(pre('create', urn('a')));
    s.see(pre('same', urn('b')));
    expect(s.succeeded()).toBe(false);
    s.see(outputs('create', urn('a')));
    s.see(outputs('same', urn('b')));
    expect(s.succeeded()).toBe(true);
  });

  it('not with a step still open: a failed create has no outputs event', () => {
    const s = new UpSteps();
    s.see(pre('create', urn('a')));
    s.see(pre('create', urn('b')));
    s.see(outputs('create', urn('a')));
    expect(s.succeeded()).toBe(false);
  });

  it('not after a failed step or an error diagnostic, even with every step closed', () => {
    const failed = new UpSteps();
    failed.see({ sequence: 0, timestamp: 0, resOpFailedEvent: { metadata: meta('create', urn('a')), status: 1, steps: 1 } } as unknown as EngineEvent);
    expect(failed.succeeded()).toBe(false);
    const diag = new UpSteps();
    diag.see({ sequence: 0, timestamp: 0, diagnosticEvent: { severity: 'error', message: 'update failed', color: 'never' } } as unknown as EngineEvent);
    expect(diag.succeeded()).toBe(false);
    const warning = new UpSteps();
    warning.see({ sequence: 0, timestamp: 0, diagnosticEvent: { severity: 'warning', message: 'plugin version', color: 'never' } } as unknown as EngineEvent);
    expect(warning.succeeded()).toBe(true);
  });
});
