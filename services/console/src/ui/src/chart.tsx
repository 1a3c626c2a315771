import { useEffect, useRef, useState } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { legendRow, timeAxis } from './chart-axis.js'
import { useConsole } from './context.js'
import { timeOfDay } from './format.js'

/** One line of a chart: its label, colour and values (null where there is no value). */
export interface Line {
  label: string
  stroke: string
  values: (number | null)[]
}

/** Props of `TimeChart`. */
export interface TimeChartProps {
  /** The x values, seconds since the epoch. */
  times: number[]
  lines: Line[]
  /** The y axis' unit, shown in its label. */
  unit: string
  testId: string
  height?: number
  /** The x axis' span, seconds since the epoch; default the data's own. */
  xRange?: [number, number] | undefined
}

/** A legend's value: up to two decimals, an en dash where the line has no value. */
const legendValue = (value: number | null): string =>
  value === null ? '–' : String(Math.round(value * 100) / 100)

/**
 * The chart's legend: the time and each line's value of the hovered point, else of the latest one
 * (`legendRow`), in the page's zone.
 */
function Legend({ times, lines, hoveredIdx }: { times: number[]; lines: Line[]; hoveredIdx: number | null }) {
  const { zone } = useConsole()
  const row = legendRow(
    times,
    lines.map((l) => l.values),
    hoveredIdx,
  )
  return (
    <div className="chart-legend" data-testid="chart-legend" data-hovered={row.hovered}>
      <span data-testid="legend-time">
        {row.at === null
          ? 'no data'
          : `${row.hovered ? '' : 'latest '}${timeOfDay(new Date(row.at * 1000).toISOString(), zone)}`}
      </span>
      {lines.map((l, i) => (
        <span key={l.label} data-testid="legend-value" data-label={l.label}>
          <span className="swatch" style={{ background: l.stroke }} />
          {l.label} <strong>{legendValue(row.values[i] ?? null)}</strong>
        </span>
      ))}
    </div>
  )
}

/**
 * A time-series line chart (uPlot, canvas): created once per zone and set of lines, its data
 * replaced on every update, its width following the container's; its legend (ours, not uPlot's)
 * follows the cursor.
 */
export function TimeChart({ times, lines, unit, testId, height = 200, xRange }: TimeChartProps) {
  const { zone } = useConsole()
  const container = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const [hoveredIdx, setHoveredIdx] = useState<number | null>(null)
  const labels = lines.map((l) => `${l.label}|${l.stroke}`).join(',')

  useEffect(() => {
    const element = container.current
    if (!element) return
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 300),
      height,
      scales: { x: { time: true } },
      axes: [timeAxis(zone), { label: unit, size: 60 }],
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.stroke, width: 2, spanGaps: false }))],
      legend: { show: false },
      hooks: { setCursor: [(u) => setHoveredIdx(u.cursor.idx ?? null)] },
      ...(zone === 'utc' ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC') } : {}),
    }
    const chart = new uPlot(options, [[], ...lines.map(() => [])], element)
    plot.current = chart
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(element.clientWidth, 300), height }),
    )
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
      plot.current = null
    }
    // Rebuilt only when its lines (labels, colours) or the zone change, not on every new value: setData below.
  }, [labels, unit, height, zone])

  useEffect(() => {
    const chart = plot.current
    if (!chart) return
    chart.setData([times, ...lines.map((l) => l.values)] as uPlot.AlignedData, xRange === undefined)
    if (xRange !== undefined) chart.setScale('x', { min: xRange[0], max: xRange[1] })
  }, [times, lines, xRange, zone])

  return (
    <div>
      <div ref={container} className="chart" data-testid={testId} data-points={times.length} />
      <Legend times={times} lines={lines} hoveredIdx={hoveredIdx} />
    </div>
  )
}
