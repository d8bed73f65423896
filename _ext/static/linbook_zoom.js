// Figures are drawn for the text column; on a phone they are scaled down to ~0.35x.
// A tap on a figure opens it at full resolution in the browser (pinch to zoom there).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".cell_output img").forEach(function (img) {
    if (img.closest("a")) return;
    var link = document.createElement("a");
    link.href = img.src;
    link.title = "Open the figure at full size";
    link.className = "linbook-figure-link";
    img.parentNode.insertBefore(link, img);
    link.appendChild(img);
  });
});
