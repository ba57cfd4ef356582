import { describe, expect, it } from '@jest/globals';
import { formatNumber, niceTicks, svgChart } from '../../scripts/_svg-chart.js';

describe('benchmark SVG charts', () => {
  it('nice ticks cover the data; numbers are short', () => {
    expect(niceTicks(7.3)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(niceTicks(0)).toEqual([0, 1]);
    expect([formatNumber(0.1234), formatNumber(250.4), formatNumber(12_500), formatNumber(2_000_000)]).toEqual(['0.123', '250', '12.5k', '2M']);
  });

  it('draws one panel per measure, one polyline per series, a point per value', () => {
    const svg = svgChart({
      title: 'konnector <sync>',
      xLabel: 'N',
      subtitle: 'test',
      panels: [
        {
          title: 'throughput',
          yLabel: 'objects/s',
          series: [
            {
              name: 'up',
              points: [
                [100, 140],
                [1000, 210],
                [5000, 195],
              ],
            },
            {
              name: 'down',
              points: [
                [100, 250],
                [1000, 280],
                [5000, NaN],
              ],
            },
          ],
        },
        {
          title: 'p99',
          yLabel: 's',
          series: [
            {
              name: 'up',
              points: [
                [100, 0.3],
                [1000, 2.1],
                [5000, 9.9],
              ],
            },
          ],
        },
      ],
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="920"')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(3);
    expect(svg.match(/<circle /g)).toHaveLength(8); // the NaN is skipped
    expect(svg).toContain('konnector &lt;sync&gt;');
    expect(svg).toContain('N (log scale)');
    expect(svg).toContain('<title>up: 5000 → 9.9</title>');
    // Same numbers, same picture.
    expect(svgChart({ title: 't', xLabel: 'x', panels: [{ title: 'a', yLabel: 'y', series: [{ name: 's', points: [[1, 2]] }] }] })).toBe(
      svgChart({ title: 't', xLabel: 'x', panels: [{ title: 'a', yLabel: 'y', series: [{ name: 's', points: [[1, 2]] }] }] }),
    );
  });

  it('refuses charts without data', () => {
    expect(() => svgChart({ title: 't', xLabel: 'x', panels: [] })).toThrow('svgChart: panels must list at least one panel');
    expect(() => svgChart({ title: 't', xLabel: 'x', panels: [{ title: 'a', yLabel: 'y', series: [] }] })).toThrow('svgChart: no data points');
  });
});
