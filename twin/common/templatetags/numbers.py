"""Numbers in templates as the browser code shows them."""
from django import template

register = template.Library()


@register.filter
def thousands(value):
    """A count with its thousands separated (1,024) in every language, as the browser's Intl
    formats counts in English and Simplified Chinese alike (Django's zh-Hans format would print
    1024). Anything that is not a whole number is shown as it is."""
    try:
        return f"{int(value):,}" if int(value) == value else value
    except (TypeError, ValueError):
        return value


@register.filter
def percent(value):
    """A fraction as a percentage with one decimal (0.0614 -> 6.1%); anything else as it is."""
    try:
        return f"{100 * float(value):.1f}%"
    except (TypeError, ValueError):
        return value
