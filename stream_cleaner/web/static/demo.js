"use strict";
// The demo page: no framework, no external assets. It shows the server's decision on every
// sentence. The server also says which decisions its perplexity limit made
// (max_perplexity_applies): moving the limit re-classifies those, and only those, here without
// a new request, as the server would (kept exactly when the perplexity is at most the limit).
(function () {
  const config = JSON.parse(document.getElementById("config").textContent);
  const $ = (id) => document.getElementById(id);
  const REASON_NAMES = {
    high_perplexity: "dropped: perplexity above the limit",
    no_words: "dropped: no words",
    too_long: "dropped: longer than any sentence or word",
    time_budget: "dropped: out of processing time",
    boilerplate: "dropped: boilerplate block (labeller)",
    site_template: "dropped: repeats across the site",
  };
  const SLIDER_MIN = 1, SLIDER_MAX = 5, HIST_MIN = 0.5, HIST_MAX = 5.5, BINS = 40;

  // --- views -------------------------------------------------------------------------------
  function showView() {
    const annotate = location.hash === "#annotate";
    $("view-clean").hidden = annotate;
    $("view-annotate").hidden = !annotate;
    $("tab-clean").toggleAttribute("aria-current", !annotate);
    $("tab-annotate").toggleAttribute("aria-current", annotate);
    if (annotate) { $("tab-annotate").setAttribute("aria-current", "page"); }
    else { $("tab-clean").setAttribute("aria-current", "page"); }
  }
  window.addEventListener("hashchange", showView);
  showView();

  // --- clean view --------------------------------------------------------------------------
  for (const mode of config.modes) $("mode").add(new Option(mode, mode, false, mode === config.mode));
  for (const choice of config.sentence_filters) {
    $("sentence-filter").add(new Option(choice, choice, false, choice === config.sentence_filter));
  }
  for (const name of config.models) $("model").add(new Option(name, name));
  $("url-note").textContent = config.fetch_urls
    ? "This server fetches http and https URLs (" + config.fetch_timeout_seconds + " s timeout, up to "
      + config.max_fetch_bytes + " bytes)" + (config.fetch_private
        ? ", private and loopback addresses included." : "; loopback and private addresses are refused.")
    : "URL fetching is off on this server (start it with --fetch-urls to allow it): paste the page instead.";
  $("url").disabled = !config.fetch_urls;

  const slider = $("threshold");
  // the server's default limit exactly, until the slider is moved (its steps are rounded)
  let limit = config.max_perplexity;
  const limitOf = () => limit;
  slider.value = String(Math.min(SLIDER_MAX, Math.max(SLIDER_MIN, Math.log10(limit))));
  let result = null;  // the last answer of /api/clean

  function showLimit() {
    const limit = limitOf();
    $("threshold-value").value = limit.toLocaleString("en");
    slider.setAttribute("aria-valuetext", limit + " perplexity");
  }
  showLimit();

  // The server's decision, unless the server says its perplexity limit made it: then the
  // decision under another limit is the server's rule for it, kept at or below the limit.
  function decide(sentence, limit) {
    if (!sentence.max_perplexity_applies) return [sentence.kept, sentence.reason];
    return sentence.perplexity > limit ? [false, "high_perplexity"] : [true, null];
  }

  // segment.join_sentences: a block's kept sentences joined by a space, except after a CJK
  // full stop; blocks by a newline, in order of first appearance
  function joinKept(kept) {
    return Array.from(kept.values(), (texts) => texts.map((text, i) =>
      (i && !config.no_space_after.includes(texts[i - 1].slice(-1)) ? " " : "") + text).join("")).join("\n");
  }

  function fmt(x) { return x === null ? "none" : (x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString("en")); }

  function render() {
    const original = $("original");
    original.textContent = "";
    let paragraph = null, block = -1;
    result.sentences.forEach((sentence, i) => {
      if (sentence.block !== block) {
        block = sentence.block;
        paragraph = document.createElement("p");
        paragraph.dataset.block = String(block);
        original.appendChild(paragraph);
      } else {
        paragraph.appendChild(document.createTextNode(" "));
      }
      const span = document.createElement("span");
      span.className = "s";
      span.dataset.i = String(i);
      span.textContent = sentence.text;
      paragraph.appendChild(span);
    });
    const legend = $("legend");
    legend.textContent = "";
    for (const reason of config.reasons) {
      const item = document.createElement("li");
      const sample = document.createElement("span");
      sample.className = "s dropped r-" + reason;
      sample.textContent = REASON_NAMES[reason] || reason;
      item.appendChild(sample);
      legend.appendChild(item);
    }
    showPage();
    reclassify();
  }

  function reclassify() {
    if (!result) return;
    const limit = limitOf();
    const kept = new Map();
    let nKept = 0, nMoved = 0, nLimited = 0;
    const spans = $("original").querySelectorAll("span.s");
    result.sentences.forEach((sentence, i) => {
      const [keep, reason] = decide(sentence, limit);
      const span = spans[i];
      const known = reason === null || reason in REASON_NAMES;
      span.className = "s " + (keep ? "kept" : "dropped r-" + (known ? reason : "other"));
      span.dataset.kept = String(keep);
      span.dataset.reason = reason || "";
      span.dataset.limit = String(sentence.max_perplexity_applies);
      span.title = "perplexity " + fmt(sentence.perplexity) + " · " + (keep ? "kept" : (REASON_NAMES[reason] || "dropped: " + reason))
        + (sentence.max_perplexity_applies ? " · the limit decides it" : "");
      if (sentence.max_perplexity_applies) nLimited += 1;
      if (keep !== sentence.kept) nMoved += 1;
      if (keep) {
        nKept += 1;
        if (!kept.has(sentence.block)) kept.set(sentence.block, []);
        kept.get(sentence.block).push(sentence.text);
      }
    });
    // the server's text while every decision is the server's
    $("cleaned").textContent = nMoved ? joinKept(kept) : result.text;
    const facts = [nKept + " of " + result.sentences.length + " sentences kept"];
    facts.push(result.max_perplexity_applies ? "at limit " + limit.toLocaleString("en")
      : "the limit does not apply (sentence filter " + result.sentence_filter + ")");
    facts.push("model " + result.model, "mode " + result.mode);
    if (result.mode !== "perplexity" && result.max_perplexity_applies) facts.push("sentence filter " + result.sentence_filter);
    facts.push("document perplexity " + fmt(result.perplexity));
    $("summary").textContent = facts.join(" · ");
    $("limit-note").textContent = nLimited
      ? "The limit decides " + nLimited + " of these sentences; the slider moves only those."
        + (nLimited < result.sentences.length ? " The others were decided before it (the reason is on each)." : "")
      : "The limit decides none of these sentences: the slider moves nothing."
        + (result.max_perplexity_applies ? "" : " It applies in perplexity mode and, in the labeller's modes, with the"
          + " sentence filter on (auto uses the labeller's own limit, if it was trained with one).");
    drawHistogram(limit);
  }

  // what the core says of the whole page, when it says something
  function showPage() {
    const facts = [];
    if (result.page_type) {
      facts.push("Page type: " + result.page_type + " (confidence " + Math.round(result.page_type_confidence * 100) + "%).");
    }
    if (result.guard === "content_loss") {
      facts.push("Content guard: the labeller dropped the page's longest run of prose (or its table of figures); the guard kept it.");
    } else if (result.guard === "corpus_joined") {
      facts.push("Content guard: the labeller kept almost nothing; the corpus labeller's blocks joined it.");
    } else if (result.guard === "thread") {
      facts.push("Content guard: a thread, whose posts the article labeller drops as comments; decided as auto decides it.");
    } else if (result.guard) {
      facts.push("Content guard: " + result.guard + ".");
    }
    $("page-facts").textContent = facts.join(" ");
    $("page-facts").hidden = !facts.length;
  }

  function drawHistogram(limit) {
    const svg = $("histogram"), NS = "http://www.w3.org/2000/svg";
    const width = 600, height = 140, left = 30, bottom = 20, top = 8;
    const x = (v) => left + (Math.min(HIST_MAX, Math.max(HIST_MIN, v)) - HIST_MIN) / (HIST_MAX - HIST_MIN) * (width - left - 10);
    const counts = new Array(BINS).fill(0);
    for (const s of result.sentences) {
      if (s.perplexity === null) continue;
      const v = Math.log10(s.perplexity);
      const b = Math.min(BINS - 1, Math.max(0, Math.floor((v - HIST_MIN) / (HIST_MAX - HIST_MIN) * BINS)));
      counts[b] += 1;
    }
    const most = Math.max(1, ...counts);
    svg.textContent = "";
    const el = (name, attrs, text) => {
      const node = document.createElementNS(NS, name);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text !== undefined) node.textContent = text;
      svg.appendChild(node);
      return node;
    };
    const step = (HIST_MAX - HIST_MIN) / BINS;
    counts.forEach((count, b) => {
      if (!count) return;
      const lo = HIST_MIN + b * step, h = count / most * (height - bottom - top);
      const bar = el("rect", {
        x: x(lo) + 1, y: height - bottom - h, width: Math.max(1, x(lo + step) - x(lo) - 2), height: h,
        class: !result.max_perplexity_applies ? "bar-other" : Math.pow(10, lo + step / 2) > limit ? "bar-dropped" : "bar-kept",
      });
      bar.appendChild(document.createElementNS(NS, "title")).textContent =
        count + " sentences, perplexity " + fmt(Math.pow(10, lo)) + " to " + fmt(Math.pow(10, lo + step));
    });
    for (let e = 1; e <= 5; e++) el("text", { x: x(e) - 8, y: height - 5 }, "1e" + e);
    if (result.max_perplexity_applies) {
      el("line", { class: "limit", x1: x(Math.log10(limit)), x2: x(Math.log10(limit)), y1: top, y2: height - bottom });
    }
    svg.setAttribute("data-limit", String(limit));
  }

  slider.addEventListener("input", () => {
    limit = Math.round(Math.pow(10, Number(slider.value)));
    showLimit();
    reclassify();
  });

  $("clean-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      mode: $("mode").value, sentence_filter: $("sentence-filter").value, model: $("model").value,
      max_perplexity: limitOf(),
    };
    const url = $("url").value.trim();
    if (url && config.fetch_urls) body.url = url;
    else body[$("input-kind").value] = $("input").value;
    setStatus("status", "Cleaning…");
    $("submit").disabled = true;
    try {
      const response = await fetch("api/clean", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      const answer = await response.json();
      if (!response.ok) {
        setStatus("status", "Error " + response.status + " (" + answer.error.code + "): " + answer.error.message, true);
        if (!answer.document || !answer.document.sentences.length) return;
        result = answer.document;
      } else {
        result = answer;
        setStatus("status", "Cleaned " + result.sentences.length + " sentences in " + result.n_blocks + " blocks.");
      }
      $("results").hidden = false;
      render();
    } catch (error) {
      setStatus("status", "The request failed: " + error, true);
    } finally {
      $("submit").disabled = false;
    }
  });

  function setStatus(id, text, isError) {
    const node = $(id);
    node.textContent = text;
    node.classList.toggle("error", Boolean(isError));
  }

  // --- annotation view ---------------------------------------------------------------------
  const KEYS = { c: ["label", "content"], b: ["label", "boilerplate"], p: ["kind", "paragraph"],
    h: ["kind", "heading"], l: ["kind", "list"] };
  let page = null, current = 0;
  const list = $("blocks");

  async function loadPages() {
    if (!config.pages_dir) { $("pages-field").hidden = true; return; }
    const answer = await (await fetch("api/annotate/pages")).json();
    $("page-path").add(new Option("(none)", ""));
    for (const path of answer.pages) $("page-path").add(new Option(path, path));
  }
  loadPages();

  function toBase64(buffer) {
    const bytes = new Uint8Array(buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  }

  $("load-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    let body;
    const file = $("file").files[0];
    if (file) body = { name: file.name, html_base64: toBase64(await file.arrayBuffer()) };
    else if ($("page-path").value) body = { path: $("page-path").value };
    else { setStatus("ann-status", "Choose a file or a page first.", true); return; }
    setStatus("ann-status", "Loading…");
    const response = await fetch("api/annotate/load", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) { setStatus("ann-status", "Error " + response.status + ": " + answer.error.message, true); return; }
    page = answer;
    current = 0;
    renderBlocks();
    $("save").disabled = !config.annotations_dir;
    setStatus("ann-status", page.source + ": " + page.blocks.length + " blocks, "
      + (page.saved ? "saved labels loaded." : "labels predicted by the cleaner.")
      + (config.annotations_dir ? "" : " This server has no folder to save labels in."));
    list.focus();
  });

  function renderBlocks() {
    list.textContent = "";
    page.blocks.forEach((block, i) => {
      const item = document.createElement("li");
      item.id = "block-" + i;
      item.setAttribute("role", "option");
      item.dataset.index = String(block.index);
      const idx = document.createElement("span");
      idx.className = "idx";
      idx.textContent = String(block.index);
      const text = document.createElement("span");
      text.className = "text";
      text.textContent = block.text;
      const tags = document.createElement("span");
      tags.className = "tags";
      tags.textContent = block.tag_path;
      text.appendChild(tags);
      const choices = document.createElement("span");
      choices.className = "choices";
      for (const [field, values] of [["label", config.labels], ["kind", config.kinds]]) {
        for (const value of values) {
          const button = document.createElement("button");
          button.type = "button";
          button.tabIndex = -1;  // the list takes the keys; buttons are for the mouse
          button.textContent = value;
          button.dataset.field = field;
          button.dataset.value = value;
          button.addEventListener("click", () => { setCurrent(i); setLabel(i, field, value); });
          choices.appendChild(button);
        }
      }
      item.append(idx, text, choices);
      item.addEventListener("click", () => setCurrent(i));
      list.appendChild(item);
      paintBlock(i);
    });
    setCurrent(0);
  }

  function paintBlock(i) {
    const block = page.blocks[i], item = $("block-" + i);
    item.className = "l-" + block.label + (i === current ? " current" : "");
    item.dataset.label = block.label;
    item.dataset.kind = block.kind;
    item.setAttribute("aria-label", "Block " + block.index + ", " + block.label + ", " + block.kind + ": " + block.text.slice(0, 80));
    for (const button of item.querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(block[button.dataset.field] === button.dataset.value));
    }
  }

  function setCurrent(i) {
    if (!page || !page.blocks.length) return;
    const before = current;
    current = Math.max(0, Math.min(page.blocks.length - 1, i));
    for (const j of [before, current]) {
      const item = $("block-" + j);
      if (!item) continue;
      item.classList.toggle("current", j === current);
      item.setAttribute("aria-selected", String(j === current));
    }
    list.setAttribute("aria-activedescendant", "block-" + current);
    $("block-" + current).scrollIntoView({ block: "nearest" });
  }

  function setLabel(i, field, value) {
    page.blocks[i][field] = value;
    paintBlock(i);
  }

  list.addEventListener("keydown", (event) => {
    if (!page || event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    if (key === "ArrowDown" || key === "j") setCurrent(current + 1);
    else if (key === "ArrowUp" || key === "k") setCurrent(current - 1);
    else if (key === "Home") setCurrent(0);
    else if (key === "End") setCurrent(page.blocks.length - 1);
    else if (KEYS[key.toLowerCase()]) setLabel(current, ...KEYS[key.toLowerCase()]);
    else if (key.toLowerCase() === "s") save();
    else return;
    event.preventDefault();
  });

  async function save() {
    if (!page || !config.annotations_dir) return;
    const body = {
      format: page.format, version: page.version, source: page.source,
      html_sha256: page.html_sha256, parser: page.parser,
      blocks: page.blocks.map((b) => ({ index: b.index, text: b.text, tag_path: b.tag_path, label: b.label, kind: b.kind })),
    };
    const response = await fetch("api/annotate/save", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (response.ok) setStatus("ann-status", "Saved " + answer.blocks + " labels as " + answer.saved + ".");
    else setStatus("ann-status", "Error " + response.status + ": " + answer.error.message, true);
  }
  $("save").addEventListener("click", save);
})();
