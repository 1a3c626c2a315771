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
import type { CausalEdge, FactNode } from './api.js'
import { clock, factName } from './format.js'

const WIDTH = 200
const HEIGHT = 78

type FactData = { fact: FactNode; selected: boolean } & Record<string, unknown>
type FactFlowNode = Node<FactData, 'fact'>

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

const nodeTypes = { fact: FactBox }

/** Positions from dagre (left to right, in causal order); React Flow wants top-left corners. */
function laidOut(
  facts: FactNode[],
  edges: CausalEdge[],
  selectedId: string | null,
): { nodes: FactFlowNode[]; edges: Edge[] } {
  const graph = new Graph()
  graph.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 60 })
  graph.setDefaultEdgeLabel(() => ({}))
  for (const fact of facts) graph.setNode(fact.id, { width: WIDTH, height: HEIGHT })
  for (const edge of edges) graph.setEdge(edge.from, edge.to)
  layout(graph)
  const byId = new Map(facts.map((f) => [f.id, f]))
  return {
    nodes: facts.map((fact) => {
      const { x, y } = graph.node(fact.id) as { x: number; y: number }
      return {
        id: fact.id,
        type: 'fact',
        position: { x: x - WIDTH / 2, y: y - HEIGHT / 2 },
        data: { fact, selected: fact.id === selectedId },
      }
    }),
    edges: edges.map((edge) => {
      const compensation = byId.get(edge.to)?.branch === 'compensation'
      const colour = compensation ? '#c2410c' : '#2563eb'
      return {
        id: `${edge.from}->${edge.to}`,
        source: edge.from,
        target: edge.to,
        markerEnd: { type: MarkerType.ArrowClosed, color: colour },
        style: { stroke: colour, strokeWidth: 2, strokeDasharray: compensation ? '6 4' : undefined },
        data: { branch: compensation ? 'compensation' : 'forward' },
      }
    }),
  }
}

/** Props of `ChoreographyGraph`. */
export interface ChoreographyGraphProps {
  facts: FactNode[]
  edges: CausalEdge[]
  /** The fact whose panel is open, outlined; null when none. */
  selectedId: string | null
  /** Called with a node's message id when it is clicked. */
  onSelect: (id: string) => void
}

/**
 * The order's causal graph: a node per fact (message id), an edge per causation; the forward chain
 * in solid blue, the compensation branch (failures and undos) in dashed orange.
 */
export function ChoreographyGraph({ facts, edges, selectedId, onSelect }: ChoreographyGraphProps) {
  const flow = useMemo(() => laidOut(facts, edges, selectedId), [facts, edges, selectedId])
  return (
    <div
      className="graph"
      data-testid="choreography-graph"
      data-nodes={facts.length}
      data-edges={edges.length}
    >
      <ReactFlow
        nodes={flow.nodes}
        edges={flow.edges}
        nodeTypes={nodeTypes}
        fitView
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_event, node) => onSelect(node.id)}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  )
}
