// Upload page answers and markup shared by the upload tests.

/** The 201 body of the upload page, as twin/fabrics/views.py sends it. */
export function storedResponse(summary: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    url: "/fabrics/3/?snapshot=9",
    snapshot: 9,
    version: 2,
    format: "ibnetdiscover",
    summary: {
      nodes: 11,
      links: 11,
      nodes_by_kind: { card: 8, switch: 3 },
      switches_by_tier: { leaf: 2, spine: 1 },
      links_by_state: { down: 1, up: 10 },
      links_by_speed: { "200 Gb/s": 1, "400 Gb/s": 10 },
      links_by_domain: { "scale-out": 11 },
      warnings: ["1 link down"],
      ...summary,
    },
  };
}

function problem(source: string | null, line: number, message: string): Record<string, unknown> {
  const where = [source, `line ${line}`].filter((part) => part !== null).join(" ");
  return { message, source, line, path: null, expected: "a port number", detail: `${where}: ${message}; expected a port number` };
}

/** The 400 body when a.txt has two bad lines and merging failed in no particular file. */
export function rejectedResponse(): Record<string, unknown> {
  return {
    detail: "a.txt line 12: bad port (and 1 more problem) Ensure this value is greater than or equal to 0.001.",
    errors: {
      file: ["a.txt line 12: bad port (and 1 more problem)"],
      default_bandwidth_gbps: ["Ensure this value is greater than or equal to 0.001."],
    },
    files: [
      {
        ...problem("a.txt", 12, "bad port"),
        detail: "a.txt line 12: bad port; expected a port number (and 1 more problem)",
        problems: [problem("a.txt", 12, "bad port"), problem("a.txt", 30, "bad port")],
        truncated: true,
      },
      {
        ...problem(null, 1, "conflicting facts"),
        problems: [problem(null, 1, "conflicting facts")],
        truncated: false,
      },
    ],
  };
}

/** The form as Django renders fabrics/upload.html (trimmed option lists). */
export const UPLOAD_FORM_HTML = `
<form method="post" enctype="multipart/form-data" class="stacked" id="upload-form" data-upload><input type="hidden" name="csrfmiddlewaretoken" value="form-token">
  <div class="dropzone" data-dropzone>
    <label for="id_file">Topology files</label><input type="file" name="file" multiple required aria-describedby="id_file_helptext" id="id_file">
    <small class="muted">One file, or several that describe one fabric.</small>
    <ul class="file-list" data-file-list></ul>
  </div>
  <label for="id_fabric">Fabric name</label><input type="text" name="fabric" maxlength="200" id="id_fabric">
  <small class="muted">Leave empty to use the name inside the file.</small>
  <label for="id_format">Format</label><select name="format" id="id_format"><option value="" selected>Detect from content</option><option value="ibnetdiscover">InfiniBand ibnetdiscover topology</option></select>
  <label for="id_role">This is</label><select name="role" id="id_role"><option value="discovered" selected>Discovered</option><option value="plan">Cabling plan</option></select>
  <label for="id_default_bandwidth_gbps">Default link bandwidth (Gb/s)</label><input type="number" name="default_bandwidth_gbps" min="0.001" step="any" id="id_default_bandwidth_gbps">
  <label for="id_default_latency_ns">Default link latency (ns)</label><input type="number" name="default_latency_ns" min="0" step="any" id="id_default_latency_ns">
  <progress class="upload-progress" max="100" value="0" hidden data-upload-progress></progress>
  <div data-upload-result></div>
  <button class="btn btn-primary" type="submit">Upload</button>
</form>`;
