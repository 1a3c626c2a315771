import { useConsole } from './context.js'
import { Graph, layout } from '@dagrejs/dagre'
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { useMemo } from 'react'
import { reasonText, stepOutcomes } from './ahead.js'
import type { CausalEdge, FactNode, PendingStep } from './api.js'
import { clock, factName } from './format.js'

const WIDTH = 200
const HEIGHT = 78
/** A step waited for is wider, for its reasons, which wrap: about this many characters a line. */
const WAITING_WIDTH = 320
const REASON_LINE = { height: 16, chars: 46 }

type FactData = { fact: FactNode; selected: boolean } & Record<string, unknown>
type FactFlowNode = Node<FactData, 'fact'>
/** A step ahead and its reasons as the page says them (`reasonText`). */
type PendingData = { step: PendingStep; reasons: string[] } & Record<string, unknown>
type PendingFlowNode = Node<PendingData, 'pending'>

/** One fact: its name, producer, state and consumers; coloured and dashed by branch. */
function FactBox({ data }: NodeProps<FactFlowNode>) {
  const { fact, selected } = data
  const { zone } = useConsole()
  const consumed = fact.consumers.filter((c) => c.receivedAt !== null).length
  const classes = ['fact', fact.branch, fact.kind]
  if (fact.late) classes.push('late')
  if (fact.state === 'parked') classes.push('parked')
  if (fact.deadLetters.length > 0) classes.push('dead')
  if (selected) classes.push('selected')
  return (
    <div
      className={classes.join(' ')}
      data-testid="graph-node"
      data-type={fact.routingKey}
      data-branch={fact.branch}
      data-kind={fact.kind}
      data-message-id={fact.id}
      data-state={fact.state}
      data-late={fact.late}
      data-selected={selected}
      title={`${fact.id}: click for its payload, headers and attributes`}
    >
      <Handle type="target" position={Position.Left} />
      <div className="name">{factName(fact.type)}</div>
      <div className="meta">
        {fact.producer ?? '?'} · {fact.state} · {clock(fact.occurredAt, zone)}
      </div>
      <div className="meta">
        consumed {consumed}/{fact.consumers.length}
        {fact.deadLetters.length > 0 && ' · dead-lettered'}
        {fact.late && ' · late'}
      </div>
      <Handle type="source" position={Position.Right} />
    </div>
  )
}

/**
 * A step the saga map says comes next: dotted and grey, after the node it follows; the one waited
 * for is amber and lists why, each reason as `reasonText` says it.
 */
function PendingBox({ data }: NodeProps<PendingFlowNode>) {
  const { step, reasons } = data
  const classes = ['fact', 'pending', step.branch, step.kind]
  if (step.waiting) classes.push('waiting')
  return (
    <div
      className={classes.join(' ')}
      data-testid="pending-step"
      data-service={step.service}
      data-handler={step.handler}
      data-reacts-to={step.reactsTo}
      data-waiting={step.waiting}
      data-branch={step.branch}
      title={`${step.service}/${step.handler}, after ${step.reactsTo}`}
    >
      <Handle type="target" position={Position.Left} />
      <div className="meta">
        {step.waiting ? 'waiting for' : 'then'} {step.service}
      </div>
      <div className="name">{stepOutcomes(step)}</div>
      {reasons.length > 0 && (
        <ul className="reasons">
          {reasons.map((text, i) => (
            <li
              key={`${step.reasons[i]?.kind ?? ''}-${i}`}
              data-testid="pending-reason"
              data-kind={step.reasons[i]?.kind}
            >
              {text}
            </li>
          ))}
        </ul>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  )
}

const nodeTypes = { fact: FactBox, pending: PendingBox }

/** A step's box: its reasons' lines counted from their length (dagre needs sizes before React draws). */
const sizeOf = (step: PendingStep, reasons: string[]) => {
  if (!step.waiting) return { width: WIDTH, height: HEIGHT - 16 }
  const lines = reasons.reduce((n, text) => n + Math.ceil(text.length / REASON_LINE.chars), 0)
  return { width: WAITING_WIDTH, height: HEIGHT - 12 + lines * REASON_LINE.height }
}

/** An edge's look: blue solid forward, orange dashed compensation, grey dotted to a step ahead. */
function edgeStyle(branch: 'forward' | 'compensation' | 'ahead') {
  const colour = { forward: '#2563eb', compensation: '#c2410c', ahead: '#94a3b8' }[branch]
  const dash = { forward: undefined, compensation: '6 4', ahead: '2 4' }[branch]
  return {
    markerEnd: { type: MarkerType.ArrowClosed, color: colour },
    style: { stroke: colour, strokeWidth: 2, strokeDasharray: dash },
    data: { branch },
  }
}

/**
 * Positions from dagre (left to right, in causal order, the steps ahead after the facts they
 * follow); React Flow wants top-left corners.
 */
function laidOut(
  facts: FactNode[],
  edges: CausalEdge[],
  ahead: PendingStep[],
  selectedId: string | null,
  say: (step: PendingStep) => string[],
): { nodes: (FactFlowNode | PendingFlowNode)[]; edges: Edge[] } {
  const graph = new Graph()
  graph.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 60 })
  graph.setDefaultEdgeLabel(() => ({}))
  for (const fact of facts) graph.setNode(fact.id, { width: WIDTH, height: HEIGHT })
  const said = new Map(ahead.map((step) => [step.id, say(step)]))
  const sized = (step: PendingStep) => sizeOf(step, said.get(step.id) ?? [])
  for (const step of ahead) graph.setNode(step.id, sized(step))
  const aheadEdges = ahead.flatMap((s) => (s.after === null ? [] : [{ from: s.after, to: s.id }]))
  for (const edge of [...edges, ...aheadEdges]) graph.setEdge(edge.from, edge.to)
  layout(graph)
  const corner = (id: string, width: number, height: number) => {
    const { x, y } = graph.node(id) as { x: number; y: number }
    return { x: x - width / 2, y: y - height / 2 }
  }
  const byId = new Map(facts.map((f) => [f.id, f]))
  return {
    nodes: [
      ...facts.map((fact): FactFlowNode => ({
        id: fact.id,
        type: 'fact',
        position: corner(fact.id, WIDTH, HEIGHT),
        data: { fact, selected: fact.id === selectedId },
      })),
      ...ahead.map((step): PendingFlowNode => {
        const { width, height } = sized(step)
        return {
          id: step.id,
          type: 'pending',
          position: corner(step.id, width, height),
          data: { step, reasons: said.get(step.id) ?? [] },
        }
      }),
    ],
    edges: [
      ...edges.map((edge) => ({
        id: `${edge.from}->${edge.to}`,
        source: edge.from,
        target: edge.to,
        ...edgeStyle(byId.get(edge.to)?.branch === 'compensation' ? 'compensation' : 'forward'),
      })),
      ...aheadEdges.map((edge) => ({
        id: `${edge.from}->${edge.to}`,
        source: edge.from,
        target: edge.to,
        ...edgeStyle('ahead'),
      })),
    ],
  }
}

/** Props of `ChoreographyGraph`. */
export interface ChoreographyGraphProps {
  facts: FactNode[]
  edges: CausalEdge[]
  /** The steps ahead (`OrderDetail.ahead`), drawn after the facts they follow. */
  ahead: PendingStep[]
  /** The page's clock and the join's (ms since the epoch), so a reason's durations keep counting. */
  now: number
  at: number
  /** The fact whose panel is open, outlined; null when none. */
  selectedId: string | null
  /** Called with a node's message id when it is clicked. */
  onSelect: (id: string) => void
}

/**
 * The order's causal graph: a node per fact (message id), an edge per causation; the forward chain
 * in solid blue, the compensation branch (failures and undos) in dashed orange; then the steps
 * ahead, dotted grey, the ones waited for in amber with why. A click on a fact selects it.
 */
export function ChoreographyGraph(props: ChoreographyGraphProps) {
  const { facts, edges, ahead, now, at, selectedId, onSelect } = props
  const { zone } = useConsole()
  const flow = useMemo(() => {
    const say = (step: PendingStep) => step.reasons.map((r) => reasonText(r, step, zone, now, at))
    return laidOut(facts, edges, ahead, selectedId, say)
  }, [facts, edges, ahead, selectedId, zone, now, at])
  return (
    <div
      className="graph"
      data-testid="choreography-graph"
      data-nodes={facts.length}
      data-edges={edges.length}
      data-pending={ahead.length}
    >
      <ReactFlow
        nodes={flow.nodes}
        edges={flow.edges}
        nodeTypes={nodeTypes}
        fitView
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_event, node) => {
          if (node.type === 'fact') onSelect(node.id)
        }}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  )
}
