"""Server-drawn SVG charts (no scripts or network needed to see them)."""
import io

__all__ = ("measured_vs_predicted_svg",)


def measured_vs_predicted_svg(points: list[dict], predicted: list[dict], *, title: str) -> str:
    """busbw against message size, measured and predicted, on a log size axis."""
    import matplotlib  # imported here: it is slow to load and only these pages need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.5, 3.6), dpi=96)
    try:
        axes.plot([p["size_bytes"] for p in points], [p["busbw_GBps"] for p in points], "o-", label="measured", color="#1f6feb")
        if predicted:
            axes.plot([p["size_bytes"] for p in predicted], [p["busbw_GBps"] for p in predicted], "s--", label="twin", color="#d4651a")
        axes.set_xscale("log", base=2)
        axes.set_xlabel("message size (bytes)")
        axes.set_ylabel("busbw (GB/s)")
        axes.set_title(title, fontsize=10)
        axes.grid(True, alpha=0.3)
        axes.legend()
        figure.tight_layout()
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg")
        svg = buffer.getvalue()
    finally:
        plt.close(figure)
    return svg[svg.index("<svg"):]  # drop the XML prolog so it can be inlined in HTML
