"""The OpenAPI schema's error answers, documented once for every operation (a drf-spectacular
postprocessing hook): they come from the shared exception handler and middleware, not from each
view, so views would otherwise leave them out and the schema would not say what clients get."""

__all__ = ("error_responses_documented",)

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every error: `detail` says what went wrong in one sentence; some errors add fields (`files`, field names).",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
    "additionalProperties": True,
}
# What any operation may answer: a refused query parameter (a NUL, an id that is no number),
# no or a bad token, a role that does not allow it, the database or Redis unreachable.
EVERY_OPERATION = {
    "400": "The request is refused: a parameter or the body is not as expected (`detail` says which).",
    "401": "No credentials, or a bad token.",
    "403": "The user's role does not allow this.",
    "503": "The database or Redis cannot be reached just now; try again.",
}
NOT_FOUND = {"404": "Nothing with this id, or one the user may not see; or a page past the last."}
TOO_LARGE = {"413": "The declared body is larger than the upload limit (TWIN_MAX_UPLOAD_BYTES); nothing was read."}


def error_responses_documented(result: dict, generator, request, public) -> dict:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            parameters = operation.get("parameters", [])
            errors = dict(EVERY_OPERATION)
            if any(parameter["in"] == "path" or parameter["name"] == "page" for parameter in parameters):
                errors |= NOT_FOUND
            if "requestBody" in operation:
                errors |= TOO_LARGE
            responses = operation.setdefault("responses", {})
            for status, description in errors.items():
                responses.setdefault(status, {"description": description, "content": content})
    return result
