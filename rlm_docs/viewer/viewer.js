"use strict";
// rlm-docs trajectory viewer: renders the embedded run data; no network, no dependencies.
// All data is inserted as text (never as HTML), so document content cannot inject markup.
(function () {
  const DATA = JSON.parse(document.getElementById("rlm-data").textContent);
  const LONG = 1200;

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "className") node.className = v;
      else if (k === "open") node.open = true;
      else node.setAttribute(k, v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  const isNum = (v) => typeof v === "number" && isFinite(v);
  const int = (v) => (isNum(v) ? Math.round(v).toLocaleString("en-US") : "–");
  const usd = (v) => (isNum(v) ? "$" + (v === 0 ? "0" : v < 0.01 ? v.toFixed(6) : v.toFixed(4)) : "–");
  const secs = (v) => (isNum(v) ? v.toFixed(v < 10 ? 2 : 1) + " s" : "–");
  const pct = (v) => (isNum(v) ? (100 * v).toFixed(1) + "%" : "–");
  const str = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

  function chip(label, value) {
    return el("span", { className: "chip" }, label + " ", el("b", { text: value }));
  }

  function pre(text, cls) {
    return el("pre", { className: cls || null, text: str(text) });
  }

  // A block of text, folded behind a <details> when long.
  function block(label, text, cls) {
    const s = str(text ?? "");
    if (!s) return null;
    if (s.length <= LONG) return el("div", {}, el("h4", { text: label }), pre(s, cls));
    return el("details", {}, el("summary", { text: `${label} (${int(s.length)} chars)` }), pre(s, cls));
  }

  function kvTable(obj) {
    const rows = Object.entries(obj || {}).filter(([, v]) => v !== null && v !== undefined);
    if (!rows.length) return null;
    return el("table", { className: "kv" },
      rows.map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: typeof v === "object" ? JSON.stringify(v) : v }))));
  }

  function statusMark(q) {
    if (q.correct === true) return el("span", { className: "mark ok", title: "correct", text: "✓" });
    if (q.correct === false) return el("span", { className: "mark bad", title: "wrong", text: "✗" });
    return el("span", { className: "mark", title: "not scored", text: "·" });
  }

  function split(records) {
    const list = Array.isArray(records) ? records : [];
    return {
      metadata: list.find((r) => r.type === "metadata") || {},
      iterations: list.filter((r) => r.type === "iteration"),
      result: list.filter((r) => r.type === "result").pop() || null,
    };
  }

  // Ledger rows of one trajectory (root turns' usage and every sub-call, nested).
  function ledgerRows(traj, rows) {
    for (const it of traj.iterations || []) {
      const m = traj.metadata || {};
      if (it.usage && typeof it.usage === "object") {
        rows.push(Object.assign({ role: "root", turn: it.iteration, depth: m.depth, model: m.root_model }, it.usage));
      }
      for (const cb of it.code_blocks || []) {
        for (const call of (cb.result && cb.result.rlm_calls) || []) {
          if (call.ledger) rows.push(Object.assign({ turn: it.iteration }, call.ledger));
          if (call.children) ledgerRows(split(call.children), rows);
        }
      }
    }
    return rows;
  }

  function ledgerTable(rows) {
    if (!rows.length) return null;
    const cols = [["turn", String], ["depth", String], ["role", String], ["model", String],
      ["input_tokens", int], ["output_tokens", int], ["cached_tokens", int], ["cost_usd", usd],
      ["latency_s", secs], ["error", String]];
    const used = cols.filter(([c]) => rows.some((r) => r[c] !== undefined && r[c] !== null));
    return el("table", { className: "ledger" },
      el("tr", {}, used.map(([c]) => el("th", { text: c.replace(/_/g, " ") }))),
      rows.map((r) => el("tr", {}, used.map(([c, f]) =>
        el("td", { className: f === String ? null : "num", text: r[c] === undefined || r[c] === null ? "" : f(r[c]) })))));
  }

  function renderCall(call, depth) {
    const model = call.model || call.root_model || "";
    const led = call.ledger || (call.children ? split(call.children).result : null) || {};
    const head = [call.kind || "call", model,
      `${int(led.input_tokens)} → ${int(led.output_tokens)} tok`, usd(call.cost_usd ?? led.cost_usd),
      isNum(call.execution_time) ? secs(call.execution_time) : null].filter(Boolean).join(" · ");
    const body = el("div", { className: "sub" },
      block("Prompt", call.prompt), block("Response", call.response));
    if (call.error || led.error) body.append(el("div", { className: "warn", text: "error: " + (call.error || led.error) }));
    if (call.children) body.append(el("h4", { text: "Child run" }), renderTrajectory(split(call.children), depth + 1));
    return el("details", { className: "call" },
      el("summary", {}, head, led.error || call.error ? el("span", { className: "tag err", text: "error" }) : null), body);
  }

  function renderIteration(it, depth) {
    const usage = it.usage || {};
    const bits = [`Turn ${it.iteration}`, isNum(it.iteration_time) ? secs(it.iteration_time) : null,
      isNum(usage.input_tokens) ? `${int(usage.input_tokens)} → ${int(usage.output_tokens)} tok` : null,
      isNum(usage.cost_usd) ? usd(usage.cost_usd) : null].filter(Boolean).join(" · ");
    const calls = (it.code_blocks || []).reduce((n, cb) => n + (((cb.result || {}).rlm_calls) || []).length, 0);
    const body = el("div", {});
    const prompt = Array.isArray(it.prompt) ? it.prompt : [];
    if (prompt.length) {
      body.append(el("details", {}, el("summary", { text: `Prompt (${prompt.length} new message${prompt.length === 1 ? "" : "s"})` }),
        prompt.map((m) => el("div", {}, el("h4", { text: m.role || "message" }), pre(m.content ?? m)))));
    }
    body.append(block("Model response", it.response));
    (it.code_blocks || []).forEach((cb, i) => {
      const res = cb.result || {};
      body.append(el("h4", { text: `Code block ${i + 1}` }), pre(cb.code || "", "code"));
      if (res.stdout) body.append(block("Output", res.stdout));
      if (res.stderr) body.append(block("Error", res.stderr, "stderr"));
      const rc = res.rlm_calls || [];
      if (rc.length) body.append(el("h4", { text: `Sub-calls (${rc.length})` }), ...rc.map((c) => renderCall(c, depth)));
    });
    if (it.notice) body.append(el("div", { className: "muted", text: it.notice }));
    if (it.final_answer !== null && it.final_answer !== undefined) body.append(el("div", { className: "final", text: "Final answer: " + str(it.final_answer) }));
    return el("details", { className: "turn", open: depth === 0 && it.iteration === 1 },
      el("summary", {}, bits,
        calls ? el("span", { className: "tag", text: `${calls} sub-call${calls === 1 ? "" : "s"}` }) : null,
        it.forced ? el("span", { className: "tag forced", text: "forced" }) : null,
        it.final_answer !== null && it.final_answer !== undefined ? el("span", { className: "tag", text: "final" }) : null),
      body);
  }

  function renderTrajectory(traj, depth) {
    const m = traj.metadata || {};
    const wrap = el("div", { className: "trajectory" });
    wrap.append(kvTable({ "root model": m.root_model, "sub model": m.sub_model, prompt: m.prompt_name,
      depth: m.depth, budget: m.budget, question: depth > 0 ? m.question : null }));
    const its = traj.iterations || [];
    if (!its.length) wrap.append(el("div", { className: "muted", text: "no turns recorded" }));
    its.forEach((it) => wrap.append(renderIteration(it, depth)));
    const r = traj.result;
    if (r && depth > 0) wrap.append(el("div", { className: "final", text: "Child answer: " + str(r.answer) }));
    return wrap;
  }

  // The decomposition record (rlm_docs/eval/decomposition.py); n/a for runs made before it.
  function renderDecomposition(d) {
    if (!d) return el("div", { className: "muted decomposition", text: "decomposition: n/a (run recorded before decomposition records existed)" });
    const depth = d.sub_calls_by_depth && typeof d.sub_calls_by_depth === "object"
      ? Object.entries(d.sub_calls_by_depth).map(([k, v]) => `depth ${k}: ${v}`).join(", ") : null;
    const wrap = el("div", { className: "decomposition" });
    wrap.append(el("div", { className: "tags" }, (d.strategies || []).map((t) => el("span", { className: "tag strategy", text: t })),
      (d.strategies || []).length ? null : el("span", { className: "muted", text: "no strategy tag" })));
    wrap.append(kvTable({ "sub-calls": d.sub_calls, "by depth": depth || null, batches: d.batches,
      "fan-outs": (d.fanouts || []).length ? d.fanouts.join(", ") : null, "max fan-out": d.fanout_max,
      "mean fan-out": isNum(d.fanout_mean) ? d.fanout_mean.toFixed(2) : null, "child runs": d.child_runs,
      "sub-call chars": int(d.sub_call_chars), "sub-call tokens": int(d.sub_call_tokens),
      "largest sub-call prompt": isNum(d.max_sub_call_chars) ? int(d.max_sub_call_chars) + " chars" : null,
      "pages looked at": d.pages_looked, "documents looked at": d.docs_looked,
      "share of corpus read": pct(d.corpus_share_read), cells: d.cells, "cells with errors": d.cell_errors,
      restarts: d.restarts }));
    return wrap;
  }

  // One node of the sub-call tree (rlm_docs/viewer/tree.py): run > turn > cell > batch/call/child.
  function treeNode(n) {
    const flags = [n.error ? "error" : null, n.restarted ? "restarted" : null, n.forced ? "forced" : null].filter(Boolean);
    const name = n.kind === "batch" ? `${n.label} × ${n.size}` : n.label;
    const stats = `${int(n.chars)} chars · ${int(n.tokens)} tok · ${usd(n.cost_usd)}`;
    const head = [el("span", { className: "node-name", text: name }), el("span", { className: "node-stats", text: stats }),
      ...flags.map((f) => el("span", { className: "tag err", text: f })),
      n.omitted ? el("span", { className: "muted", text: ` +${int(n.omitted)} calls not recorded` }) : null,
      n.question ? el("div", { className: "muted node-q", text: n.question }) : null];
    const kids = n.children || [];
    const attrs = { className: `node ${n.kind}`, "data-kind": n.kind, "data-size": n.kind === "batch" ? n.size : null };
    if (!kids.length) return el("li", attrs, el("div", { className: "node-head" }, head));
    const open = n.kind === "run" || n.kind === "turn" || n.kind === "cell";
    return el("li", attrs, el("details", { open }, el("summary", { className: "node-head" }, head),
      el("ul", {}, kids.map(treeNode))));
  }

  function renderTree(tree) {
    if (!tree) return el("div", { className: "muted", text: "no sub-call tree (no trajectory log)" });
    return el("ul", { className: "tree" }, treeNode(tree));
  }

  function renderBody(q) {
    const body = el("div", {});
    body.append(el("h3", { text: "Answer" }),
      q.answer.length ? el("ul", { className: "answer" }, q.answer.map((a) => el("li", { text: a })))
        : el("div", { className: "answer muted", text: "(no answer)" }));
    if (q.explanation) body.append(el("div", { className: "explanation", text: q.explanation }));
    if (q.caveat) body.append(el("div", { className: "caveat", text: "Caveat: " + q.caveat }));
    if (Array.isArray(q.gold) && q.gold.length) {
      body.append(el("h3", { text: "Expected" }), el("ul", { className: "gold" },
        q.gold.map((v) => el("li", { text: Array.isArray(v) ? v.join(" | ") : str(v) }))));
    }
    body.append(el("h3", { text: `Citations (${q.citations.length})` }));
    if (!q.citations.length) body.append(el("div", { className: "muted", text: "none" }));
    q.citations.forEach((c) => body.append(el("div", { className: "citation" },
      el("span", { className: "where", text: `${c.file} · page ${c.page}` }),
      c.snippet ? el("div", { className: "snippet", text: c.snippet }) : null,
      c.snippet_error ? el("div", { className: "warn", text: c.snippet_error }) : null)));
    if (q.evidence && q.evidence.length) {
      body.append(el("div", { className: "muted", text: "Gold evidence: " + q.evidence.map((e) => `${e.document} p.${e.page}`).join(", ") }));
    }
    const e = q.effort || {};
    body.append(el("h3", { text: "Effort" }), kvTable({ steps: e.steps, "sub-calls": e.sub_calls,
      "input tokens": isNum(e.input_tokens) ? int(e.input_tokens) : null,
      "output tokens": isNum(e.output_tokens) ? int(e.output_tokens) : null,
      cost: isNum(e.cost_usd) ? usd(e.cost_usd) : null, wall: isNum(e.wall_s) ? secs(e.wall_s) : null,
      "max depth": e.max_depth, "stop reason": q.stop_reason, score: q.score, system: q.system }));
    if (q.scores && Object.keys(q.scores).length) body.append(el("h3", { text: "Scoring" }), kvTable(q.scores));
    body.append(el("h3", { text: "Decomposition" }), renderDecomposition(q.decomposition));
    body.append(el("h3", { text: "Sub-call tree" }), renderTree(q.tree));
    if (q.error) body.append(el("div", { className: "warn", text: "error: " + q.error }));
    const rows = q.ledger || (q.trajectory ? ledgerRows(q.trajectory, []) : []);
    if (rows.length) body.append(el("h3", { text: `Ledger (${rows.length} calls)` }), ledgerTable(rows));
    if (q.trajectory) {
      body.append(el("h3", { text: "Trajectory" }), renderTrajectory(q.trajectory, 0));
    } else {
      body.append(el("h3", { text: "Trajectory" }), el("div", { className: "muted",
        text: q.trajectory_error || "no trajectory log recorded" }));
    }
    return body;
  }

  function toggle(card, q, open) {
    const want = open === undefined ? !card.classList.contains("open") : open;
    if (want && !card.dataset.rendered) {
      card.querySelector(".q-body").append(renderBody(q));
      card.dataset.rendered = "1";
    }
    card.classList.toggle("open", want);
    card.querySelector(".q-head").setAttribute("aria-expanded", String(want));
  }

  function card(q) {
    const e = q.effort || {};
    const head = el("button", { className: "q-head", type: "button", "aria-expanded": "false" },
      statusMark(q), el("span", { className: "qid", text: q.id }),
      el("span", {}, el("div", { className: "qtext", text: q.question || "(no question text)" }),
        el("div", { className: "qans", text: "→ " + (q.answer.length ? q.answer.join(" | ") : "(no answer)") })),
      el("span", { className: "effort" }, el("span", { text: usd(e.cost_usd) }),
        el("span", { text: `${int(e.steps)} steps` }), el("span", { text: `${int(e.sub_calls)} sub` }),
        q.decomposition ? el("span", { className: "fan", text: `fan-out ${int(q.decomposition.fanout_max)}` }) : null,
        ...((q.decomposition || {}).strategies || []).map((t) => el("span", { className: "tag strategy", text: t }))));
    const node = el("section", { className: "q", "data-id": q.id }, head, el("div", { className: "q-body" }));
    head.addEventListener("click", () => toggle(node, q));
    return node;
  }

  const cards = DATA.questions.map((q, i) => ({ q, i, node: card(q) }));

  function refresh() {
    const needle = document.getElementById("filter").value.trim().toLowerCase();
    const status = document.getElementById("status").value;
    const sort = document.getElementById("sort").value;
    const strategy = document.getElementById("strategy").value;
    const minFan = Number(document.getElementById("fanout").value) || 0;
    const shown = cards.filter(({ q }) => {
      const d = q.decomposition;
      if (strategy !== "any" && !(d && (d.strategies || []).includes(strategy))) return false;
      if (minFan > 0 && !(d && isNum(d.fanout_max) && d.fanout_max >= minFan)) return false;
      if (status === "correct" && q.correct !== true) return false;
      if (status === "wrong" && q.correct !== false) return false;
      if (status === "unscored" && q.correct !== null) return false;
      return !needle || [q.id, q.question, ...q.answer].join(" ").toLowerCase().includes(needle);
    });
    const key = (q) => ((q.effort || {})[sort] ?? (q.decomposition || {})[sort] ?? -1);
    if (sort !== "order") shown.sort((a, b) => key(b.q) - key(a.q) || a.i - b.i);
    const main = document.getElementById("questions");
    main.replaceChildren(...shown.map((c) => c.node));
    if (!shown.length) main.append(el("div", { className: "empty", text: "no questions match" }));
    document.getElementById("count").textContent = `${shown.length} of ${cards.length} shown`;
  }

  const s = DATA.summary || {};
  document.getElementById("title").textContent = DATA.title || "rlm-docs run";
  document.getElementById("source").textContent = `${DATA.kind === "run" ? "eval run" : "trajectory"}: ${DATA.source || ""}`;
  document.getElementById("summary").append(
    chip("questions", int(s.questions)),
    chip("accuracy", !s.scored ? "not scored" : s.partial_credit
      ? `${pct(s.accuracy)} mean score (${s.correct}/${s.scored} score ≥ 0.5)`
      : `${pct(s.accuracy)} (${s.correct}/${s.scored})`),
    chip("cost", usd(s.cost_usd)), chip("steps", int(s.steps)), chip("sub-calls", int(s.sub_calls)),
    chip("input tokens", int(s.input_tokens)), chip("output tokens", int(s.output_tokens)),
    chip("wall", secs(s.wall_s)));
  const run = DATA.run || {};
  for (const k of ["system", "model", "sub_model", "judge"]) if (run[k]) document.getElementById("summary").append(chip(k.replace("_", " "), run[k]));
  if (run.budget) document.getElementById("source").append(el("div", { text: "budget: " + JSON.stringify(run.budget) }));
  const tags = new Set(DATA.questions.flatMap((q) => (q.decomposition || {}).strategies || []));
  for (const t of [...tags].sort()) document.getElementById("strategy").append(el("option", { value: t, text: t }));
  for (const id of ["filter", "status", "sort", "strategy", "fanout"]) document.getElementById(id).addEventListener("input", refresh);
  document.getElementById("expand-all").addEventListener("click", () => cards.forEach((c) => toggle(c.node, c.q, true)));
  document.getElementById("collapse-all").addEventListener("click", () => cards.forEach((c) => toggle(c.node, c.q, false)));
  refresh();
  if (cards.length === 1) toggle(cards[0].node, cards[0].q, true);
})();
