"""One way to page a table: server-side, keeping the page's other query parameters in its links."""
from django.core.paginator import Page, Paginator

__all__ = ("paged",)


def paged(request, rows, per_page: int) -> tuple[Page, str]:
    """The requested page of `rows` (out-of-range or junk page numbers give the nearest page) and
    the query string without `page`, for the links to the other pages (`_pages.html`)."""
    page = Paginator(rows, per_page).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return page, query.urlencode()
