// Announce the message an action left for the page that follows it (POST, redirect, GET).
// The message is in the page when it loads, so its role="status" or "alert" is not a change
// that a screen reader is bound to announce. Focusing it reads it out and puts a sighted
// keyboard user at the top of the content, with the message ringed; Tab goes on from there.
// Without JavaScript the message is still the first thing in the main content.
(function () {
  "use strict";
  var area = document.querySelector("[data-announce-on-load]");
  if (!area || !area.textContent.trim()) { return; }
  // A page that already places focus keeps it: a refused form focuses its first error
  // (autofocus), and a link to a fragment is where the reader asked to be.
  if (document.querySelector("[autofocus]") || window.location.hash) { return; }
  var active = document.activeElement;
  if (active && active !== document.body && active !== document.documentElement) { return; }
  area.focus();
})();
