(function () {
  "use strict";
  var nav = document.querySelector("nav.toc");
  var list = nav && nav.querySelector("details.toc-list");
  if (!list) { return; }
  var box = document.createElement("input");
  box.type = "search";
  box.className = "filter";
  box.placeholder = "Filter tools and types";
  box.setAttribute("aria-label", "Filter tools and types");
  list.parentNode.insertBefore(box, list);
  var items = nav.querySelectorAll("li[data-name]");
  box.addEventListener("input", function () {
    var query = box.value.trim().toLowerCase();
    if (query) { list.open = true; }
    items.forEach(function (item) {
      item.hidden = query !== "" && item.getAttribute("data-name").indexOf(query) < 0;
    });
  });
  var links = {};
  nav.querySelectorAll("a[href^='#']").forEach(function (a) {
    links[decodeURIComponent(a.getAttribute("href").slice(1))] = a;
  });
  if (!("IntersectionObserver" in window)) { return; }
  var current = null;
  var watch = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      var link = links[entry.target.id];
      if (entry.isIntersecting && link) {
        if (current) { current.removeAttribute("aria-current"); }
        current = link;
        link.setAttribute("aria-current", "location");
      }
    });
  }, {rootMargin: "0px 0px -75% 0px"});
  document.querySelectorAll("main section[id]").forEach(function (section) {
    watch.observe(section);
  });
}());
