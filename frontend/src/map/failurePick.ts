// Picking failed elements on the map for the failure what-if form.

/** The comma-separated element list with `id` added once. */
export function addElement(list: string, id: string): string {
  const elements = list.split(",").map((element) => element.trim()).filter((element) => element !== "");
  return (elements.includes(id) ? elements : [...elements, id]).join(", ");
}
