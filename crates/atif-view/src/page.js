// Jumps: to a step, to the next call of a tool, to the next error or change; a diff page opens
// at its first divergence. `#selftest` in the URL runs the page's own checks and writes their
// results into <pre id="selftest">, for a headless browser's dumped DOM.
(function () {
  "use strict";
  var status = document.getElementById("status");
  var current = null;
  function say(text) {
    if (status) { status.textContent = text; }
  }
  function reveal(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") { p.open = true; }
    }
    var old = document.querySelectorAll(".target");
    for (var i = 0; i < old.length; i++) { old[i].classList.remove("target"); }
    el.classList.add("target");
    current = el;
    // Below the sticky jump bar; scrollTo rather than scrollIntoView, which headless
    // screenshots draw from the wrong offset.
    var bar = document.getElementById("jump");
    var top = el.getBoundingClientRect().top + window.scrollY - (bar ? bar.offsetHeight : 0) - 8;
    window.scrollTo(0, Math.max(0, top));
  }
  function after(list) {
    if (!list.length) { return null; }
    if (current) {
      for (var i = 0; i < list.length; i++) {
        var e = list[i];
        if (e !== current && !current.contains(e) &&
            (current.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)) {
          return e;
        }
      }
    }
    return list[0];
  }
  function jump(list, what) {
    var el = after(list);
    if (!el) { say("no " + what); return null; }
    reveal(el);
    say(what + ": step " + el.getAttribute("data-step"));
    return el;
  }
  function steps() { return Array.prototype.slice.call(document.querySelectorAll("main li.step")); }
  function toStep(n) {
    var el = document.getElementById("a-" + n) || document.getElementById("s-" + n) ||
      document.getElementById("g-" + n);
    if (!el) { say("no step " + n); return null; }
    reveal(el);
    say("step " + n);
    return el;
  }
  function nextCall(name) {
    return jump(steps().filter(function (s) {
      return (s.getAttribute("data-tools") || "").split(" ").indexOf(name) >= 0;
    }), "call of " + name);
  }
  function nextError() { return jump(document.querySelectorAll("main li.step.error"), "error"); }
  function nextChange() {
    return jump(document.querySelectorAll(
      "main .row.inserted, main .row.removed, main .row.changed, main .row.inside"), "change");
  }
  function on(id, event, handler) {
    var el = document.getElementById(id);
    if (el) { el.addEventListener(event, handler); }
  }
  on("to-step", "submit", function (event) {
    event.preventDefault();
    toStep(document.getElementById("step").value);
  });
  on("next-call", "click", function () { nextCall(document.getElementById("tool").value); });
  on("next-error", "click", nextError);
  on("next-change", "click", nextChange);
  // A diff page opens at its first divergence (the header also shows it, for a reader who
  // has not scrolled); any fragment in the URL says where else to start.
  var first = document.querySelector("main .first");
  if (first && !location.hash) { reveal(first); }
  if (location.hash === "#selftest") { selftest(); }

  function shown(el) {
    return !!el && (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
  }
  function selftest() {
    // When the page became interactive: its DOM parsed, this script reached (milliseconds
    // since navigation started).
    var timing = performance.getEntriesByType("navigation")[0];
    var r = { title: document.title, steps: steps().length,
      interactive_ms: timing ? Math.round(timing.domInteractive) : null,
      script_ms: Math.round(performance.now()) };
    r.step_ids = steps().map(function (s) { return s.id; });
    // Before anything scrolls: whether the first divergence's preview starts on the first screen.
    var pv = document.querySelector("header .row.first");
    r.preview_in_first_screen = !!pv && pv.getBoundingClientRect().top >= 0 &&
      pv.getBoundingClientRect().top < window.innerHeight;
    var fold = document.querySelector("main details.fold, main details.same");
    if (fold) {
      var inner = fold.querySelector("pre");
      r.folded_hidden = !fold.open && !shown(inner);
      fold.open = true;
      r.unfolded_shown = shown(inner);
      fold.open = false;
      r.refolded_hidden = !shown(inner);
    }
    var sub = document.querySelector("details.subagent");
    if (sub) {
      var subStep = sub.querySelector("li.step");
      sub.open = false;
      r.subagent_folds = !shown(subStep);
      sub.open = true;
      r.subagent_unfolds = shown(subStep);
    }
    var tool = document.getElementById("tool");
    if (tool && tool.value) {
      current = null;
      var a = nextCall(tool.value), b = nextCall(tool.value);
      r.next_call = [a && a.id, b && b.id];
    }
    current = null;
    var e = nextError();
    r.next_error = e && e.id;
    if (document.getElementById("next-change")) {
      current = null;
      var c1 = nextChange(), c2 = nextChange();
      r.next_change = [c1 && c1.id, c2 && c2.id];
      var f = document.querySelector("main .first");
      r.first = f && f.id;
      if (f) {
        reveal(f);
        var rect = f.getBoundingClientRect();
        r.first_in_view = rect.top >= 0 && rect.top < window.innerHeight;
        window.scrollTo(0, 0);
        r.preview = !!document.querySelector("header .row.first");
      }
    }
    var t = toStep(2);
    r.to_step_2 = t && t.id;
    // Bar charts (an envelope page): each row's label and its two bars' drawn widths, in pixels.
    r.bars = Array.prototype.map.call(document.querySelectorAll("main table.bars tr"), function (row) {
      var rects = row.querySelectorAll("rect");
      return [row.querySelector("th").textContent, row.className].concat(
        Array.prototype.map.call(rects, function (rect) {
          return Math.round(rect.getBoundingClientRect().width);
        }));
    });
    r.images = Array.prototype.map.call(document.images, function (i) {
      return i.complete && i.naturalWidth > 0;
    });
    var out = document.createElement("pre");
    out.id = "selftest";
    out.textContent = JSON.stringify(r);
    document.body.appendChild(out);
  }
})();
