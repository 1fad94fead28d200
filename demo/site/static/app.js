document.addEventListener("DOMContentLoaded", function () {
  var banner = document.getElementById("cookie-consent");
  if (!banner) return;
  if (localStorage.getItem("cookie-consent")) { banner.classList.add("is-hidden"); return; }
  banner.querySelector(".btn-accept").addEventListener("click", function () {
    localStorage.setItem("cookie-consent", "all");
    banner.classList.add("is-hidden");
  });
});
