// Follow one deletion operation: poll its JSON status every second until it is done and
// update the page in place. Without JavaScript the page reloads itself (the head's noscript).
//
// Only what changed is written: a screen reader announces every write to a live region, and
// a step's node that is replaced loses a reader's place in the list. Once the operation is
// done the page shows what a reload would (heading, completion time, the stopped warning) and
// says the new heading in the live region; focus stays where the reader left it.
//
// A deletion queued for a worker has no steps; once the worker has made it, the page puts in
// place what the server renders for the operation it became (a reload's content, without the
// reload that sent a screen reader back to the top), focuses its heading, says so in the live
// region, and follows it.
(function () {
  "use strict";
  var root = document.getElementById("deletion");
  if (!root) { return; }
  var byId = function (id) { return document.getElementById(id); };
  var heading = byId("op-heading");
  var live = byId("op-live");
  var refresh = byId("op-refresh");
  var FOLLOWING = "This page updates by itself every second.";
  if (root.dataset.done === "true") { return; }
  refresh.textContent = FOLLOWING;
  var url = root.dataset.statusUrl;
  var label = function (value) {
    var text = String(value || "").replace(/_/g, " ");
    return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
  };
  var setText = function (node, text) {
    if (node.textContent !== text) { node.textContent = text; }
  };
  var setClass = function (node, name) {
    if (node.className !== name) { node.className = name; }
  };
  var setAttr = function (node, name, value) {
    if (node.getAttribute(name) !== String(value)) { node.setAttribute(name, value); }
  };
  var setHidden = function (node, hidden) {
    if (node.hidden !== hidden) { node.hidden = hidden; }
  };
  var announce = function (text) { setText(live, text); };
  var drawStep = function (list, step) {
    var item = list.querySelector('li[data-store="' + CSS.escape(step.store) + '"]');
    if (!item) {
      item = document.createElement("li");
      item.dataset.store = step.store;
      item.innerHTML = '<span class="step-icon" aria-hidden="true"></span>'
        + '<span class="step-store"></span> <span class="status"></span> '
        + '<span class="muted step-attempts" hidden></span>';
      item.querySelector(".step-store").textContent = label(step.store);
      list.appendChild(item);
    }
    setClass(item, "step step-" + step.status);
    var state = item.querySelector(".status");
    setClass(state, "status status-" + step.status);
    setText(state, label(step.status));
    var attempts = item.querySelector(".step-attempts");
    if (attempts) {
      setText(attempts, step.attempts > 1 ? step.attempts + " attempts" : "");
      setHidden(attempts, step.attempts < 2);
    }
  };
  var finish = function (data) {
    var stopped = data.status !== "completed";
    setText(heading, data.heading);
    if (data.completed_at) {
      var time = byId("op-completed");
      setAttr(time, "datetime", data.completed_at);
      setText(time, data.completed_label);
      setHidden(byId("op-completed-at"), false);
    }
    var warning = byId("op-stopped");
    if (stopped && warning) {
      setText(byId("op-tries"), data.attempts > 1 ? "after " + data.attempts + " tries " : "");
      setHidden(warning, false);
    }
    setText(refresh, stopped ? "This deletion has stopped." : "This operation is finished.");
    root.dataset.done = "true";
    announce(data.heading + ". " + data.verified + " of " + data.total + " stores verified clean.");
  };
  // Answers that say this page may show nothing any more (another login in another tab: 403;
  // another person's operation: 404): the browser shows what the server renders now, as for
  // the login page. Only a server error or the network is retried.
  var GONE = [401, 403, 404];
  // The operation a worker made of a queued deletion is another record (its memories
  // counted, who asked, why): fetch this page again and put its section in place of this one,
  // keeping the live region's node (a region replaced may not be announced). Resolve to
  // whether the operation is done. (The page fetched takes any django message waiting for the
  // next page, and it is not shown; one waits only between a form's post and its redirect.)
  var follow = function () {
    return fetch(window.location.href, { headers: { "Accept": "text/html" }, credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (GONE.indexOf(response.status) !== -1) { return ""; }  // no section: reloaded below
        if (!response.ok) { throw new Error(response.status); }
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("deletion");
        if (!fresh) {
          // Not the page (the login's session ended, say): let the browser show what it is.
          window.location.reload();
          return true;
        }
        if (fresh.dataset.status === "queued") { return false; }
        fresh.querySelector("#op-live").replaceWith(live);
        root.dataset.status = fresh.dataset.status;
        root.dataset.done = fresh.dataset.done;
        root.replaceChildren.apply(root, Array.prototype.slice.call(fresh.childNodes));
        heading = byId("op-heading");
        refresh = byId("op-refresh");
        heading.tabIndex = -1;
        heading.focus();
        var done = root.dataset.done === "true";
        var counts = byId("op-verified") ? byId("op-verified").textContent + " of "
          + byId("op-total").textContent + " stores verified clean." : "";
        announce((done ? heading.textContent + ". " : "A worker has started this deletion. ") + counts);
        if (!done) { refresh.textContent = FOLLOWING; }
        return done;
      });
  };
  var render = function (data) {
    if (root.dataset.status === "queued") {
      return data.status === "queued" ? false : follow();
    }
    var status = byId("op-status");
    if (root.dataset.status !== data.status && !data.done) { announce(label(data.status)); }
    setText(status, label(data.status));
    setClass(status, "status status-" + data.status);
    setText(byId("op-verified"), String(data.verified));
    setText(byId("op-total"), String(data.total));
    var bar = byId("op-progress");
    setAttr(bar, "aria-valuenow", data.verified);
    setAttr(bar, "aria-valuemax", data.total);
    var width = (data.total ? Math.round(100 * data.verified / data.total) : 0) + "%";
    if (bar.firstElementChild.style.width !== width) { bar.firstElementChild.style.width = width; }
    var list = byId("op-steps");
    data.steps.forEach(function (step) { drawStep(list, step); });
    root.dataset.status = data.status;
    // Done is completed, or stopped with copies not verified as removed (failed).
    if (data.done) { finish(data); }
    return data.done;
  };
  // An answer that is no status (the login page, once the session ended): the page cannot
  // follow the operation any more, so the browser shows what it is, as ``follow`` does. It
  // kept polling every 3 s and kept saying it updated itself, showing a stale state.
  var NOT_STATUS = new Error("not the status");
  var poll = function () {
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (GONE.indexOf(response.status) !== -1) { throw NOT_STATUS; }
        if (!response.ok) { throw new Error(response.status); }
        if ((response.headers.get("Content-Type") || "").indexOf("application/json") === -1) { throw NOT_STATUS; }
        return response.json();
      })
      .then(render)
      .then(function (done) { if (!done) { window.setTimeout(poll, 1000); } })
      .catch(function (error) {
        if (error === NOT_STATUS) { window.location.reload(); return; }
        window.setTimeout(poll, 3000);
      });
  };
  window.setTimeout(poll, 500);
})();
