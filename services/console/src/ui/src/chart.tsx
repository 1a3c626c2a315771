import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { timeAxis } from './chart-axis.js'

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

/**
 * A time-series line chart (uPlot, canvas): created once, its data replaced on every update, its
 * width following the container's.
 */
export function TimeChart({ times, lines, unit, testId, height = 200, xRange }: TimeChartProps) {
  const container = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const labels = lines.map((l) => `${l.label}|${l.stroke}`).join(',')

  useEffect(() => {
    const element = container.current
    if (!element) return
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 300),
      height,
      scales: { x: { time: true } },
      axes: [timeAxis, { label: unit, size: 60 }],
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.stroke, width: 2, spanGaps: false }))],
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
    // Rebuilt only when its lines change (labels, colours), not on every new value: setData below.
  }, [labels, unit, height])

  useEffect(() => {
    const chart = plot.current
    if (!chart) return
    chart.setData([times, ...lines.map((l) => l.values)] as uPlot.AlignedData, xRange === undefined)
    if (xRange !== undefined) chart.setScale('x', { min: xRange[0], max: xRange[1] })
  }, [times, lines, xRange])

  return <div ref={container} className="chart" data-testid={testId} data-points={times.length} />
}
