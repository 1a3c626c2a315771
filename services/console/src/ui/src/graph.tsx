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
/** A step waited for is wider, for its reasons; each reason is one line (the full text in its title). */
const WAITING_WIDTH = 300
const REASON_HEIGHT = 17

type FactData = { fact: FactNode; selected: boolean } & Record<string, unknown>
type FactFlowNode = Node<FactData, 'fact'>
type PendingData = { step: PendingStep; now: number; at: number } & Record<string, unknown>
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
 * for is amber and says why, one reason a line.
 */
function PendingBox({ data }: NodeProps<PendingFlowNode>) {
  const { step, now, at } = data
  const { zone } = useConsole()
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
      {step.reasons.length > 0 && (
        <ul className="reasons">
          {step.reasons.map((reason) => {
            const text = reasonText(reason, step, zone, now, at)
            return (
              <li key={reason.kind} data-testid="pending-reason" data-kind={reason.kind} title={text}>
                {text}
              </li>
            )
          })}
        </ul>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  )
}

const nodeTypes = { fact: FactBox, pending: PendingBox }

const sizeOf = (step: PendingStep) =>
  step.waiting
    ? { width: WAITING_WIDTH, height: HEIGHT - 16 + step.reasons.length * REASON_HEIGHT }
    : { width: WIDTH, height: HEIGHT - 16 }

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
  clocks: { now: number; at: number },
): { nodes: (FactFlowNode | PendingFlowNode)[]; edges: Edge[] } {
  const graph = new Graph()
  graph.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 60 })
  graph.setDefaultEdgeLabel(() => ({}))
  for (const fact of facts) graph.setNode(fact.id, { width: WIDTH, height: HEIGHT })
  for (const step of ahead) graph.setNode(step.id, sizeOf(step))
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
        const { width, height } = sizeOf(step)
        return {
          id: step.id,
          type: 'pending',
          position: corner(step.id, width, height),
          data: { step, ...clocks },
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
  const flow = useMemo(
    () => laidOut(facts, edges, ahead, selectedId, { now, at }),
    [facts, edges, ahead, selectedId, now, at],
  )
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
