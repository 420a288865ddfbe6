"""networkx's maximum-weight matching, step for step, on the 2-seat Swiss window graph.

The 2-seat Swiss pairing is what ``networkx.max_weight_matching(graph, maxcardinality=True)`` returns for
the window graph of :func:`referee.tournaments.swiss.swiss_two` — and in late rounds that graph has
several maximum-weight matchings (a pair of neighbours in the standings who met before can be mended
upwards or downwards at the same cost), so *which* one networkx returns is part of the pairing rule: only
a program taking networkx's very steps returns the same one. :func:`swiss_matching` is that program: the
same algorithm (Edmonds' blossom algorithm as Joris van Rantwijk wrote it and networkx ported it,
``networkx/algorithms/matching.py``, BSD licence), the same order of vertices, neighbours, queue,
ties and blossoms, for the graph networkx is given there: vertices ``0 … n − 1`` added in order, the
edges ``i – j`` for ``0 < j − i ≤ window`` added by increasing ``i`` then ``j`` (so each vertex's
neighbours come in increasing order), of weight ``big × (1 + top − met(i, j)) − (j − i)²``.

What differs is only what each step costs (networkx's own schedule of work is O(n) per augmentation
whatever the graph, and more in the late rounds):

* networkx resets every label and grows every alternating tree again at each augmentation. A stage that
  ends in an augmentation without a dual adjustment leaves the trees it grew before the augmenting one
  ("dead": no augmenting path) as the next stage would grow them again, edge for edge, unless one of
  their vertices changed its mate or they met an older blossom: those are kept, with the blossoms they
  made (:class:`_Stage`). A stage that keeps trees and then needs a dual adjustment is dropped and grown
  from nothing, exactly as networkx grows it.
* networkx scans every vertex and every blossom for each dual adjustment. From a stage's first
  adjustment on, :class:`_Track` keeps the least-slack edges in heaps ordered as networkx scans them
  (slack, then vertex, then blossom in the order made: its first-found on ties), the labelled blossoms in
  sets, and lets the S- and T-vertices' duals move lazily (a sign and the adjustments' total when
  labelled).
* a blossom keeps the list of its leaves (networkx's order) until an augmentation turns its children.

Tests (``tests/tournaments/test_pairing.py``) compare it with networkx on random graphs of this kind
(blossoms and every kind of dual adjustment included), with and without kept trees, and on Swiss
histories of 5–12 rounds.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable
from typing import Any


class _Blossom:
    """A non-trivial blossom: ``childs`` (sub-blossoms or vertices, base first), ``edges`` between them,
    ``parent``, ``base``, and ``mybestedges`` (networkx's least-slack edges to other S-blossoms)."""

    __slots__ = ("base", "cache", "childs", "edges", "mybestedges", "parent", "serial", "stamp")

    def __init__(self, serial: int) -> None:
        self.serial = serial  # the order made: networkx's order of its blossom dicts
        self.cache: list[int] | None = None  # leaves(), until an augmentation turns the children
        self.stamp = -1  # the stage whose mybestedges these are (networkx clears them at each stage start)
        self.childs: list[Any] = []
        self.edges: list[tuple[int, int]] = []
        self.mybestedges: list[tuple[int, int]] | None = None
        self.parent: _Blossom | None = None
        self.base = -1

    def leaves(self) -> list[int]:
        """The vertices inside, in networkx's order (a stack of the children, the last popped first: the
        leaves of each child in turn, the last child first). Kept (``cache``) until an augmentation turns
        the children; a new blossom takes its children's (and drops them)."""
        if self.cache is not None:
            return self.cache
        out: list[int] = []
        stack = [*self.childs]
        pop, extend, append = stack.pop, stack.extend, out.append
        while stack:
            t = pop()
            if t.__class__ is _Blossom:
                extend(t.childs)
            else:
                append(t)
        self.cache = out
        return out


def swiss_matching(n: int, window: int, met_of: dict[int, dict[int, int]], big: int, top: int, *,
                   keep_dead_trees: bool = True) -> set[tuple[int, int]]:
    """The matching ``networkx.max_weight_matching(G, maxcardinality=True)`` returns for the window graph
    of ``n`` vertices described in the module docstring (``met_of[i][j]``: how often i and j met), as a
    set of pairs ``(i, j)``. ``keep_dead_trees=False`` grows every stage from nothing (networkx's own
    schedule of work, for the tests)."""
    if n == 0:
        return set()
    span = window

    def weight(v: int, w: int) -> int:
        m = met_of.get(v)
        return big * (1 + top - (m.get(w, 0) if m else 0)) - (w - v) ** 2

    def neighbours(v: int) -> range:
        return range(max(0, v - span), min(n, v + span + 1))

    maxweight = 0
    if n > 1:
        if any(not met_of.get(i, {}).get(i + 1) for i in range(n - 1)):
            maxweight = max(0, big * (1 + top) - 1)  # the largest weight an edge can have
        else:
            for i in range(n):
                for j in range(i + 1, min(n, i + 1 + span)):
                    maxweight = max(maxweight, weight(i, j))

    mate = [-1] * n
    label: dict[Any, Any] = {}
    labeledge: dict[Any, Any] = {}
    inblossom: list[Any] = list(range(n))
    vparent: list[_Blossom | None] = [None] * n
    bestedge: dict[Any, Any] = {}
    dualvar = [maxweight] * n
    # from a stage's first dual adjustment on, the S-vertices' (−1) and T-vertices' (+1) duals move lazily:
    # dual = dualvar + sign × (adjustments so far − those when the vertex got its label)
    sign = [0] * n
    mark = [0] * n
    taken = [0]

    def dual(x: int) -> int:
        g = sign[x]
        return dualvar[x] + g * (taken[0] - mark[x]) if g else dualvar[x]
    blossomdual: dict[_Blossom, int] = {}  # live blossoms in the order they were made (networkx's dict order)
    allowedge: set[tuple[int, int]] = set()
    slab: set[_Blossom] = set()  # blossoms labelled S (networkx's end of stage looks at every blossom)
    made_count: list[int] = []
    trk: _Track | None = None  # this stage's dual adjustments, from its first
    queue: list[int] = []
    free = list(range(n))  # unmatched vertices, increasing

    def parent_of(b: Any) -> _Blossom | None:
        return b.parent if isinstance(b, _Blossom) else vparent[b]

    def set_parent(b: Any, p: _Blossom | None) -> None:
        if isinstance(b, _Blossom):
            b.parent = p
        else:
            vparent[b] = p

    def base_of(b: Any) -> int:
        return b.base if isinstance(b, _Blossom) else b

    def slack(v: int, w: int) -> int:
        return dual(v) + dual(w) - 2 * weight(v, w) if v < w else dual(v) + dual(w) - 2 * weight(w, v)

    stage = _Stage(free, mate, inblossom=inblossom, label=label, labeledge=labeledge, bestedge=bestedge,
                   blossomdual=blossomdual, keeping=keep_dead_trees)

    def assignLabel(w: int, t: int, v: int | None) -> None:
        b = inblossom[w]
        label[w] = label[b] = t
        if isinstance(b, _Blossom):
            if t == 1:
                slab.add(b)
            else:
                slab.discard(b)
        if trk is not None:
            trk.labelled(b, t)
        stage.touched.append(w)
        if isinstance(b, _Blossom):
            stage.note_blossom()
        if v is not None:
            labeledge[w] = labeledge[b] = (v, w)
        else:
            labeledge[w] = labeledge[b] = None
        bestedge[w] = bestedge[b] = None
        if t == 1:
            if isinstance(b, _Blossom):
                queue.extend(b.leaves())
            else:
                queue.append(b)
        elif t == 2:
            base = base_of(b)
            assignLabel(mate[base], 1, base)

    def scanBlossom(v: int, w: int) -> int | None:
        path = []
        base = None
        vv: int | None = v
        ww: int | None = w
        while vv is not None:
            b = inblossom[vv]
            if label[b] & 4:
                base = base_of(b)
                break
            path.append(b)
            label[b] = 5
            if labeledge[b] is None:
                vv = None
            else:
                vv = labeledge[b][0]
                b = inblossom[vv]
                vv = labeledge[b][0]
            if ww is not None:
                vv, ww = ww, vv
        for b in path:
            label[b] = 1
        return base

    def addBlossom(base: int, v: int, w: int) -> None:
        bb = inblossom[base]
        bv = inblossom[v]
        bw = inblossom[w]
        b = _Blossom(len(made_count))
        made_count.append(1)
        b.base = base
        stage.note_made(b)
        blossomdual[b] = 0  # (networkx: blossomparent[b] = None here, blossomdual[b] = 0 below: same order)
        set_parent(bb, b)
        b.childs = path = []
        b.edges = edgs = [(v, w)]
        while bv != bb:
            set_parent(bv, b)
            path.append(bv)
            edgs.append(labeledge[bv])
            v = labeledge[bv][0]
            bv = inblossom[v]
        path.append(bb)
        path.reverse()
        edgs.reverse()
        while bw != bb:
            set_parent(bw, b)
            path.append(bw)
            edgs.append((labeledge[bw][1], labeledge[bw][0]))
            w = labeledge[bw][0]
            bw = inblossom[w]
        label[b] = 1
        slab.add(b)
        labeledge[b] = labeledge[bb]
        members: list[int] = []
        relabelled: list[int] = []  # the leaves of T children: queued, as S now (networkx: in leaves() order)
        for c in reversed(path):
            part = c.leaves() if c.__class__ is _Blossom else [c]
            if label[c] == 2:
                relabelled += part
            members += part
            if c.__class__ is _Blossom:
                c.cache = None  # (kept once, by the new blossom)
        b.cache = members
        queue.extend(relabelled)
        for x in members:
            inblossom[x] = b
        bestedgeto: dict[Any, tuple[int, int]] = {}
        for bv in path:
            if isinstance(bv, _Blossom):
                if bv.mybestedges is not None and bv.stamp == stage.number:
                    nblist = bv.mybestedges
                    bv.mybestedges = None
                else:
                    nblist = [(x, y) for x in bv.leaves() for y in neighbours(x) if x != y]
            else:
                nblist = [(bv, y) for y in neighbours(bv) if bv != y]
            for k in nblist:
                (i, j) = k
                if inblossom[j] == b:
                    i, j = j, i
                bj = inblossom[j]
                if bj != b and label.get(bj) == 1 and ((bj not in bestedgeto) or slack(i, j) < slack(*bestedgeto[bj])):
                    bestedgeto[bj] = k
            bestedge[bv] = None
        b.mybestedges = list(bestedgeto.values())
        b.stamp = stage.number
        mybestedge = None
        mybestslack = 0
        bestedge[b] = None
        for k in b.mybestedges:
            kslack = slack(*k)
            if mybestedge is None or kslack < mybestslack:
                mybestedge = k
                mybestslack = kslack
        bestedge[b] = mybestedge
        if trk is not None:
            trk.made(b, relabelled)

    def expandBlossom(b: _Blossom, endstage: bool) -> None:
        def _recurse(b: _Blossom, endstage: bool):
            for s in b.childs:
                set_parent(s, None)
                if isinstance(s, _Blossom):
                    if endstage and blossomdual[s] == 0:
                        yield s
                    else:
                        for x in s.leaves():
                            inblossom[x] = s
                else:
                    inblossom[s] = s
            if (not endstage) and label.get(b) == 2:
                entrychild = inblossom[labeledge[b][1]]
                j = b.childs.index(entrychild)
                if j & 1:
                    j -= len(b.childs)
                    jstep = 1
                else:
                    jstep = -1
                v, w = labeledge[b]
                while j != 0:
                    if jstep == 1:
                        p, q = b.edges[j]
                    else:
                        q, p = b.edges[j - 1]
                    label[w] = None
                    label[q] = None
                    assignLabel(w, 2, v)
                    allowedge.add((p, q))
                    allowedge.add((q, p))
                    j += jstep
                    if jstep == 1:
                        v, w = b.edges[j]
                    else:
                        w, v = b.edges[j - 1]
                    allowedge.add((v, w))
                    allowedge.add((w, v))
                    j += jstep
                bw = b.childs[j]
                label[w] = label[bw] = 2
                slab.discard(bw)
                labeledge[w] = labeledge[bw] = (v, w)
                bestedge[bw] = None
                j += jstep
                while b.childs[j] != entrychild:
                    bv = b.childs[j]
                    if label.get(bv) == 1:
                        j += jstep
                        continue
                    if isinstance(bv, _Blossom):
                        for v in bv.leaves():
                            if label.get(v):
                                break
                    else:
                        v = bv
                    if label.get(v):
                        label[v] = None
                        label[mate[base_of(bv)]] = None
                        assignLabel(v, 2, labeledge[v][0])
                    j += jstep
            label.pop(b, None)
            slab.discard(b)
            labeledge.pop(b, None)
            bestedge.pop(b, None)
            del blossomdual[b]

        stack = [_recurse(b, endstage)]
        while stack:
            top_ = stack[-1]
            for s in top_:
                stack.append(_recurse(s, endstage))
                break
            else:
                stack.pop()

    def augmentBlossom(b: _Blossom, v: int) -> None:
        def _recurse(b: _Blossom, v: int):
            b.cache = None  # its children turn
            t: Any = v
            while parent_of(t) != b:
                t = parent_of(t)
            if isinstance(t, _Blossom):
                yield (t, v)
            i = j = b.childs.index(t)
            if i & 1:
                j -= len(b.childs)
                jstep = 1
            else:
                jstep = -1
            while j != 0:
                j += jstep
                t = b.childs[j]
                if jstep == 1:
                    w, x = b.edges[j]
                else:
                    x, w = b.edges[j - 1]
                if isinstance(t, _Blossom):
                    yield (t, w)
                j += jstep
                t = b.childs[j]
                if isinstance(t, _Blossom):
                    yield (t, x)
                set_mate(w, x)
                set_mate(x, w)
            b.childs = b.childs[i:] + b.childs[:i]
            b.edges = b.edges[i:] + b.edges[:i]
            b.base = base_of(b.childs[0])

        stack = [_recurse(b, v)]
        while stack:
            top_ = stack[-1]
            for args in top_:
                stack.append(_recurse(*args))
                break
            else:
                stack.pop()

    def set_mate(v: int, w: int) -> None:
        if mate[v] == -1:
            del free[bisect.bisect_left(free, v)]
        mate[v] = w
        stage.changed.append(v)

    def augmentMatching(v: int, w: int) -> None:
        for first, other in ((v, w), (w, v)):
            s, j = first, other
            while 1:
                bs = inblossom[s]
                if isinstance(bs, _Blossom):
                    augmentBlossom(bs, s)
                set_mate(s, j)
                if labeledge[bs] is None:
                    break
                t = labeledge[bs][0]
                bt = inblossom[t]
                s, j = labeledge[bt]
                if isinstance(bt, _Blossom):
                    augmentBlossom(bt, j)
                set_mate(j, s)

    def grow() -> int:
        """Process the queue (networkx's inner ``while queue and not augmented``): 1 when an augmenting
        path was found and used, 0 when the queue ran out."""
        while 1:
            v = stage.pop(queue)
            if v is None:
                return 0
            bv = inblossom[v]
            dv = dual(v)
            mv = met_of.get(v)
            for w in neighbours(v):
                if w == v:
                    continue
                bw = inblossom[w]
                if bv == bw:
                    continue
                if (v, w) not in allowedge:
                    g = sign[w]
                    dw = dualvar[w] + g * (taken[0] - mark[w]) if g else dualvar[w]
                    kslack = dv + dw - 2 * (big * (1 + top - (mv.get(w, 0) if mv else 0)) - (w - v) ** 2)
                    if kslack <= 0:
                        allowedge.add((v, w))
                        allowedge.add((w, v))
                if (v, w) in allowedge:
                    lw = label.get(bw)
                    if lw is None:
                        assignLabel(w, 2, v)
                    elif lw == 1:
                        base = scanBlossom(v, w)
                        if base is not None:
                            addBlossom(base, v, w)
                        else:
                            augmentMatching(v, w)
                            return 1
                    elif label.get(w) is None:
                        label[w] = 2
                        labeledge[w] = (v, w)
                        stage.touched.append(w)
                        stage.note_blossom()
                elif label.get(bw) == 1:
                    if bestedge.get(bv) is None or kslack < slack(*bestedge[bv]):
                        bestedge[bv] = (v, w)
                        if trk is not None:
                            trk.push3(bv, (v, w))
                elif label.get(w) is None:
                    if bestedge.get(w) is None or kslack < slack(*bestedge[w]):
                        bestedge[w] = (v, w)
                        if trk is not None:
                            trk.push2(w, (v, w))

    def start_stage_from_nothing() -> None:
        """networkx's stage start: every label cleared, every single vertex labelled S and queued."""
        label.clear()
        slab.clear()
        labeledge.clear()
        bestedge.clear()
        stage.number += 1  # (networkx: every blossom's mybestedges cleared)
        allowedge.clear()
        queue[:] = []
        for v in list(free):
            if label.get(inblossom[v]) is None:
                assignLabel(v, 1, None)
        stage.begin_full(len(queue))

    while 1:
        if not stage.resume(queue, lambda b: expandBlossom(b, True), slab):
            start_stage_from_nothing()
        augmented = 0
        while 1:
            if grow():
                augmented = 1
                break
            if stage.memo:  # the queue ran out: a dual adjustment, which only a stage from nothing may make
                for b in reversed(stage.alive()):  # blossoms networkx has not made yet: undone, the last first
                    del blossomdual[b]
                    for c in b.childs:
                        set_parent(c, None)
                        for x in (c.leaves() if isinstance(c, _Blossom) else (c,)):
                            inblossom[x] = c
                stage.abandon()
                start_stage_from_nothing()
                continue
            stage.adjusted = True
            if trk is None:
                trk = _Track(n, label=label, bestedge=bestedge, inblossom=inblossom, blossomdual=blossomdual,
                             dualvar=dualvar, slack=slack, sign=sign, mark=mark, taken=taken)
            deltatype, delta, deltaedge, deltablossom = trk.least()
            if deltatype == -1:
                deltatype = 1
                delta = max(0, min(dual(x) for x in range(n)))
            trk.adjust(delta)
            if deltatype == 1:
                break
            elif deltatype == 2:
                (v, w) = deltaedge
                allowedge.add((v, w))
                allowedge.add((w, v))
                queue.append(v)
            elif deltatype == 3:
                (v, w) = deltaedge
                allowedge.add((v, w))
                allowedge.add((w, v))
                queue.append(v)
            elif deltatype == 4:
                leaves = deltablossom.leaves()
                expandBlossom(deltablossom, False)
                trk.expanded(deltablossom, leaves)
        if trk is not None:
            trk.finish()
        trk = None
        if not augmented:
            break
        stage.end()
        for b in sorted(slab, key=lambda b: b.serial):  # networkx: every blossom, in blossomdual's order
            if b not in blossomdual or b in stage.spared:
                continue
            if b.parent is None and label.get(b) == 1 and blossomdual[b] == 0:
                expandBlossom(b, True)
    return {(v, mate[v]) for v in range(n) if -1 < v < mate[v]}


class _Stage:
    """Which trees a stage grew, and whether the next stage may keep them (module docstring).

    A stage "from nothing" is networkx's: labels cleared, every single vertex labelled S and queued, the
    queue popped from its end — so the trees grow one after another, from the highest single vertex
    down, each to its end before the next root is popped. A tree that ends without an augmenting path
    is *dead*. When a stage ends in an augmentation without a dual adjustment, the next stage (same
    duals) grows the same dead trees first, edge for edge, to the same labels and the same blossoms —
    as long as none of their vertices changed its mate (an edge from one of their S-vertices to a vertex
    outside the trees grown before is not tight — else that vertex would be in the tree, or the tree
    would not be dead — so what became of that vertex changes none of the tree's labels) and they met
    no blossom older than the stage. Those trees are kept (their labels stay, and the blossoms they made,
    which networkx undoes at the stage's end and makes again in the next: same children, same edges,
    made in the same order relative to every other blossom alive); every other label goes back to a
    stage start's (single vertices S, the rest none), the blossoms of the trees not kept are undone, and
    the stage pops the next single vertex below the kept trees. A stage that keeps trees and then needs
    a dual adjustment is dropped (its blossoms, and the kept ones, undone; nothing else it did lasts)
    and grown from nothing, as networkx grows it: the least-slack edges (``bestedge``) that choose the
    adjustment are not kept."""

    def __init__(self, free: list[int], mate: list[int], *, inblossom: list, label: dict, labeledge: dict,
                 bestedge: dict, blossomdual: dict, keeping: bool) -> None:
        self.free, self.mate, self.inblossom, self.label, self.labeledge = free, mate, inblossom, label, labeledge
        self.bestedge, self.blossomdual, self.keeping = bestedge, blossomdual, keeping
        self.memo = False  # this stage kept trees (a dual adjustment: start from nothing)
        self.touched: list[int] = []  # vertices labelled this stage, in order
        self.changed: list[int] = []  # vertices whose mate changed (this stage; the last one at a resume)
        self.adjusted = False
        # grown this stage: [root, its first index in touched, met an older blossom, blossoms it made]
        self.trees: list[list[Any]] = []
        # kept: (root, labelled, lo, hi, blossoms made)
        self.reused: list[tuple[int, list[int], int, int, list[_Blossom]]] = []
        self.kept: list[tuple[int, list[int], int, int, list[_Blossom]]] = []  # dead trees the next stage may keep
        self.dirty: list[int] = []  # labelled by the trees not kept
        self.spared: set[_Blossom] = set()  # blossoms of kept trees, not undone at the stage's end
        self.resumable = False
        self.bottom = 0
        self.next_root = -1
        self.number = 0  # stages started, for the blossoms' mybestedges

    def begin_full(self, bottom: int) -> None:
        self.memo = self.adjusted = False
        self.trees, self.touched, self.changed, self.reused = [], [], [], []
        self.bottom = bottom

    def abandon(self) -> None:
        self.resumable = False

    def alive(self) -> list[_Blossom]:
        """The blossoms of this kept-trees stage that networkx has not made at its start, in the order made."""
        return [b for tree in self.reused for b in tree[4]] + [b for tree in self.trees for b in tree[3]]

    def note_blossom(self) -> None:
        """The tree being grown met a blossom older than the stage: not kept."""
        if self.trees:
            self.trees[-1][2] = 1

    def note_made(self, b: _Blossom) -> None:
        self.trees[-1][3].append(b)

    def pop(self, queue: list[int]) -> int | None:
        if self.memo:
            if queue:
                return queue.pop()
            if self.next_root < 0:
                return None
            root = self.free[self.next_root]
            self.next_root -= 1
            self.trees.append([root, len(self.touched), 0, []])
            b = self.inblossom[root]
            if isinstance(b, _Blossom):  # networkx queued the blossom's leaves at the start: popped last first
                self.note_blossom()
                queue.extend(b.leaves())
                return queue.pop()
            return root
        if not queue:
            return None
        v = queue.pop()
        if len(queue) < self.bottom:  # one of the single vertices queued at the start: a new tree
            self.bottom = len(queue)
            self.trees.append([v, len(self.touched), 0, []])
            if isinstance(self.inblossom[v], _Blossom):
                self.note_blossom()
        return v

    def end(self) -> None:
        """After an augmentation, before the stage's end: what the next stage may keep — the dead trees
        grown before the first that met an older blossom, and their blossoms (``spared``)."""
        self.spared = set()
        if self.adjusted or not self.trees or not self.keeping:
            self.resumable = False
            return
        grown = []
        ends = [tree[1] for tree in self.trees[1:]] + [len(self.touched)]
        for k, (root, start, old, made) in enumerate(self.trees):
            if old or k == len(self.trees) - 1:
                self.dirty = [tree[0] for tree in self.trees[k:]] + self.touched[start:]
                break
            labelled = self.touched[start:ends[k]]
            grown.append((root, labelled, min(labelled) if labelled and min(labelled) < root else root,
                          max(labelled) if labelled and max(labelled) > root else root, made))
        self.kept = self.reused + grown
        self.spared = {b for tree in self.kept for b in tree[4]}
        self.resumable = True

    def resume(self, queue: list[int], undo: Callable[[_Blossom], None], slab: set[_Blossom]) -> bool:
        """Start a stage keeping the last stage's dead trees that nothing changed (``undo`` undoes the
        blossoms of the others); False when it must start from nothing."""
        if not self.resumable:
            return False
        label, labeledge, free, mate = self.label, self.labeledge, self.free, self.mate
        inblossom = self.inblossom
        changed = sorted(set(self.changed))
        moved = set(changed)
        keep, nf = 0, len(free)
        for root, labelled, lo, hi, _ in self.kept:
            if keep >= nf or free[nf - 1 - keep] != root:
                break
            i = bisect.bisect_left(changed, lo)
            if i < len(changed) and changed[i] <= hi and not moved.isdisjoint(labelled):
                break
            keep += 1
        for tree in self.kept[keep:]:
            for b in tree[4]:
                if b in self.blossomdual and b.parent is None:
                    undo(b)
        roots = [tree[0] for tree in self.kept[keep:]]
        for labelled in (*(tree[1] for tree in self.kept[keep:]), self.dirty, changed):
            for v in labelled:
                b = inblossom[v]
                label.pop(v, None)
                labeledge.pop(v, None)
                label.pop(b, None)
                labeledge.pop(b, None)
                if isinstance(b, _Blossom):
                    slab.discard(b)
        for v in (*roots, *self.dirty):
            if mate[v] == -1:  # a single vertex again: labelled S with no edge, as at a stage start
                b = inblossom[v]
                label[v] = label[b] = 1
                labeledge[v] = labeledge[b] = None
                if isinstance(b, _Blossom):
                    slab.add(b)
        self.bestedge.clear()
        self.number += 1
        queue[:] = []
        self.memo = True
        self.adjusted = False
        self.reused = self.kept[:keep]
        self.trees, self.touched, self.changed, self.dirty = [], [], [], []
        self.next_root = nf - 1 - keep
        return True


class _Track:
    """A stage's dual adjustments without networkx's scans of every vertex and blossom: the vertices
    and blossoms labelled S and T (kept up to date from the first adjustment on), and the least-slack
    edges in two heaps (``bestedge`` of single vertices; of S-blossoms and S-vertices), each entry keyed
    by its slack plus what the adjustments so far took off every such slack (δ, 2δ), so that the order
    of the keys is the order of the slacks, then of the vertices (increasing) and blossoms (in the
    order made) — the order networkx scans them in, first found kept on ties."""

    def __init__(self, n: int, *, label: dict, bestedge: dict, inblossom: list, blossomdual: dict, dualvar: list,
                 slack: Callable[[int, int], int], sign: list[int], mark: list[int], taken: list[int]) -> None:
        self.n, self.label, self.bestedge, self.inblossom = n, label, bestedge, inblossom
        self.blossomdual, self.dualvar, self.slack = blossomdual, dualvar, slack
        self.sign, self.mark, self.box = sign, mark, taken
        self.taken = taken[0] = 0  # the adjustments so far, added up
        self.signed: list[int] = []  # vertices given a sign (to settle at the stage's end)
        self.bS: set[_Blossom] = set()
        self.bT: set[_Blossom] = set()
        self.h2: list[tuple] = []
        self.h3: list[tuple] = []
        self.version: dict[Any, int] = {}
        for k, t in list(label.items()):
            if t in (1, 2) and self._top(k):
                self.labelled(k, t)
        for k, e in list(bestedge.items()):
            if e is not None and not isinstance(k, _Blossom) and label.get(inblossom[k]) is None:
                self.push2(k, e)
        for k, e in list(bestedge.items()):
            if e is not None and self._top(k) and label.get(k) == 1:
                self.push3(k, e)

    def _top(self, b: Any) -> bool:
        if isinstance(b, _Blossom):
            return b.parent is None and b in self.blossomdual
        return self.inblossom[b] == b

    def _leaves(self, b: Any) -> Any:
        return b.leaves() if isinstance(b, _Blossom) else (b,)

    def _sign(self, members: Any, s: int) -> None:
        """Settle the duals of ``members`` and let them move as S (−1), T (+1) or not (0) from now."""
        sign, mark, dualvar, taken, signed = self.sign, self.mark, self.dualvar, self.taken, self.signed
        for x in members:
            g = sign[x]
            if g:
                dualvar[x] += g * (taken - mark[x])
            elif s:
                signed.append(x)
            sign[x] = s
            mark[x] = taken

    def finish(self) -> None:
        """Settle every moving dual (the stage is over)."""
        self._sign(self.signed, 0)
        self.signed = []

    def labelled(self, b: Any, t: int) -> None:
        """The top-level blossom (or vertex) ``b`` labelled ``t``."""
        self._sign(self._leaves(b), -1 if t == 1 else 1)
        if isinstance(b, _Blossom):
            (self.bS if t == 1 else self.bT).add(b)
            (self.bT if t == 1 else self.bS).discard(b)

    def made(self, b: _Blossom, relabelled: list[int]) -> None:
        """``b`` made, its leaves that were T (``relabelled``) S now."""
        for c in b.childs:
            if isinstance(c, _Blossom):
                self.bS.discard(c)
                self.bT.discard(c)
        self._sign(relabelled, -1)
        self.bS.add(b)
        if self.bestedge.get(b) is not None:
            self.push3(b, self.bestedge[b])

    def expanded(self, b: _Blossom, leaves: list[int]) -> None:
        """After the T-blossom ``b`` was expanded (its children relabelled): labels and heaps again."""
        self.bS.discard(b)
        self.bT.discard(b)
        label, inblossom, bestedge = self.label, self.inblossom, self.bestedge
        tops = {}
        self._sign(leaves, 0)
        for x in leaves:
            tops[id(inblossom[x])] = inblossom[x]
        for top in tops.values():
            t = label.get(top)
            if t in (1, 2):
                self.labelled(top, t)
            elif isinstance(top, _Blossom):
                self.bS.discard(top)
                self.bT.discard(top)
        for x in leaves:
            if label.get(inblossom[x]) is None and bestedge.get(x) is not None:
                self.push2(x, bestedge[x])
        for top in tops.values():
            if label.get(top) == 1 and bestedge.get(top) is not None:
                self.push3(top, bestedge[top])

    def push2(self, w: int, edge: tuple[int, int]) -> None:
        version = self.version[w] = self.version.get(w, 0) + 1
        heapq.heappush(self.h2, (self.slack(*edge) + self.taken, w, version, edge))

    def push3(self, b: Any, edge: tuple[int, int]) -> None:
        version = self.version[b] = self.version.get(b, 0) + 1
        order = self.n + b.serial if isinstance(b, _Blossom) else b
        heapq.heappush(self.h3, (self.slack(*edge) + 2 * self.taken, order, version, edge, b))

    def least(self) -> tuple[int, Any, Any, Any]:
        """networkx's choice: (deltatype, delta, deltaedge, deltablossom); deltatype −1 when none."""
        label, inblossom, bestedge = self.label, self.inblossom, self.bestedge
        deltatype, delta, deltaedge, deltablossom = -1, None, None, None
        h2 = self.h2
        while h2:
            key, w, version, edge = h2[0]
            if self.version.get(w) == version and bestedge.get(w) == edge and label.get(inblossom[w]) is None:
                deltatype, delta, deltaedge = 2, key - self.taken, edge
                break
            heapq.heappop(h2)
        h3 = self.h3
        while h3:
            key, _, version, edge, b = h3[0]
            if self.version.get(b) == version and bestedge.get(b) == edge and self._top(b) and label.get(b) == 1:
                d = (key - 2 * self.taken) // 2
                if deltatype == -1 or d < delta:
                    deltatype, delta, deltaedge = 3, d, edge
                break
            heapq.heappop(h3)
        if self.bT:
            b = min(self.bT, key=lambda b: (self.blossomdual[b], b.serial))
            if deltatype == -1 or self.blossomdual[b] < delta:
                deltatype, delta, deltablossom = 4, self.blossomdual[b], b
        return deltatype, delta, deltaedge, deltablossom

    def adjust(self, delta: int) -> None:
        blossomdual = self.blossomdual
        self.taken = self.box[0] = self.taken + delta
        for b in self.bS:
            blossomdual[b] += delta
        for b in self.bT:
            blossomdual[b] -= delta
