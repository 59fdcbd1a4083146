import "./styles.css";
import { startApp } from "./app";

// The bundle may be loaded with or without `defer`; wait for the DOM either way.
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => startApp(document), { once: true });
} else {
  startApp(document);
}
