/** The runtime Dockerfiles: multi-stage, pinned small non-root base, entry point that the TypeScript build produces. */
import { describe, expect, it } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe.each(['backend', 'konnector'])('runtime/Dockerfile.%s', (name) => {
  const text = fs.readFileSync(path.join(root, 'runtime', `Dockerfile.${name}`), 'utf8');
  const froms = [...text.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => ({ image: m[1]!, stage: m[2] }));

  it('is multi-stage with pinned images and a distroless non-root runtime stage', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f.image).not.toMatch(/:latest$|^[^:]+$/);
    expect(froms.at(-1)!.image).toMatch(/^gcr\.io\/distroless\/nodejs\d+-debian\d+:nonroot$/);
    const user = [...text.matchAll(/^USER\s+(\S+)/gim)].at(-1)?.[1];
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
  });

  it('runs the compiled main of the program, whose TypeScript source exists', () => {
    const cmd = /^CMD\s+\["([^"]+)"\]/m.exec(text)?.[1];
    expect(cmd).toBe(`lib/runtime/${name}/main.js`);
    expect(fs.existsSync(path.join(root, 'runtime', name, 'main.ts'))).toBe(true);
    // The compiled output comes from the build stage, not from the build context.
    expect(text).toMatch(/COPY --from=build \/src\/lib \.\/lib/);
    expect(text).toMatch(/tsc -p tsconfig\.build\.json/);
  });
});
