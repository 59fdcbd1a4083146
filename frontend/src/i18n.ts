// Every user-visible string of the frontend lives here. The server-rendered
// templates carry their own translations; this table covers only what the
// browser code writes into the page.

const en = {
  "banner.brokerDown":
    "Live updates and background work are unavailable: the message broker (Redis) cannot be reached. Retrying…",
  "banner.serverUnreachable": "The server cannot be reached. Retrying…",

  "run.status.pending": "Pending",
  "run.status.running": "Running",
  "run.status.succeeded": "Succeeded",
  "run.status.failed": "Failed",
  "run.failedWithoutDetail": "The run failed without an error message.",
  "run.noResult": "The run finished without a result.",

  "hopStats.cards": "Cards",
  "hopStats.switches": "Switches",
  "hopStats.links": "Links",
  "hopStats.pairs": "Card pairs",
  "hopStats.meanHops": "Mean hops",
  "hopStats.diameter": "Diameter (hops)",
  "hopStats.unreachablePairs": "Unreachable pairs",
  "hopStats.histogramCaption": "Card pairs by hop count",
  "hopStats.hopsLabel": "{hops} hops",
  "hopStats.oneHopLabel": "1 hop",

  "http.status": "HTTP {status}",
  "http.networkError": "The server could not be reached.",
  "http.invalidResponse": "The server sent an unexpected response.",

  "map.loading": "Loading fabric…",
  "map.empty": "No nodes in this snapshot.",
  "map.loadFailed": "Could not load the fabric graph: {detail}",
  "map.legend": "Legend",
  "map.row.core": "Core",
  "map.row.spine": "Spine",
  "map.row.leaf": "Leaf",
  "map.row.endpoint": "Endpoints",
  "map.category.core": "Core switch",
  "map.category.spine": "Spine switch",
  "map.category.leaf": "Leaf switch",
  "map.category.switch": "Other switch",
  "map.category.card": "Card",
  "map.category.nic": "NIC",
  "map.category.host": "Host",
  "map.category.aggregation": "Aggregation",
  "map.category.other": "Other",
  "map.link.up": "Link up",
  "map.link.degraded": "Link degraded",
  "map.link.down": "Link down",
  "map.kind.card": "Card",
  "map.kind.switch": "Switch",
  "map.kind.nic": "NIC",
  "map.kind.host": "Host",
  "map.kind.aggregation": "Aggregation",
  "map.tooltip.kind": "Kind",
  "map.tooltip.tier": "Tier",
  "map.tooltip.host": "Host",
  "map.tooltip.degree": "Links",
  "map.tooltip.none": "—",

  "list.separator": ", ",
  "size.bytes": "{size} B",
  "size.kib": "{size} KiB",
  "size.mib": "{size} MiB",
  "size.gib": "{size} GiB",

  "upload.sending": "Uploading… {percent}",
  "upload.processing": "Parsing and storing…",
  "upload.stored": "Stored as v{version} (detected format: {format})",
  "upload.open": "Open the fabric",
  "upload.nodes": "Nodes",
  "upload.links": "Links",
  "upload.speeds": "Speeds",
  "upload.count": "{label}: {count}",
  "upload.withBreakdown": "{total} ({list})",
  "upload.atSpeed": "{count} × {speed}",
  "upload.linkState.up": "up",
  "upload.linkState.degraded": "degraded",
  "upload.linkState.down": "down",
  "upload.rejected": "Nothing was stored; see the problems marked in the form.",
  "upload.unnamedSource": "Upload",
  "upload.truncated": "… and more (only the first problems are listed)",

  "fabricLive.snapshot": "New snapshot v{version} ({role}) from {format}.",
  "fabricLive.snapshotBy": "New snapshot v{version} ({role}) from {format} uploaded by {user}.",
  "fabricLive.show": "Show it",
  "fabricLive.role.discovered": "discovered",
  "fabricLive.role.plan": "cabling plan",
} as const;

export type MessageKey = keyof typeof en;

// Typing the Chinese table against the English keys makes a missing or extra
// key a compile error; the unit test guards the same property at run time.
const zhHans: Record<MessageKey, string> = {
  "banner.brokerDown": "实时更新和后台任务不可用：无法连接消息代理（Redis）。正在重试…",
  "banner.serverUnreachable": "无法连接服务器。正在重试…",

  "run.status.pending": "等待中",
  "run.status.running": "运行中",
  "run.status.succeeded": "已成功",
  "run.status.failed": "已失败",
  "run.failedWithoutDetail": "任务失败，但没有错误信息。",
  "run.noResult": "任务已结束，但没有结果。",

  "hopStats.cards": "加速卡",
  "hopStats.switches": "交换机",
  "hopStats.links": "链路",
  "hopStats.pairs": "卡对",
  "hopStats.meanHops": "平均跳数",
  "hopStats.diameter": "直径（跳）",
  "hopStats.unreachablePairs": "不可达卡对",
  "hopStats.histogramCaption": "按跳数统计的卡对",
  "hopStats.hopsLabel": "{hops} 跳",
  "hopStats.oneHopLabel": "1 跳",

  "http.status": "HTTP {status}",
  "http.networkError": "无法连接服务器。",
  "http.invalidResponse": "服务器返回了无法识别的响应。",

  "map.loading": "正在加载拓扑…",
  "map.empty": "此快照中没有节点。",
  "map.loadFailed": "无法加载网络拓扑：{detail}",
  "map.legend": "图例",
  "map.row.core": "核心层",
  "map.row.spine": "脊层",
  "map.row.leaf": "叶层",
  "map.row.endpoint": "端点",
  "map.category.core": "核心交换机",
  "map.category.spine": "脊交换机",
  "map.category.leaf": "叶交换机",
  "map.category.switch": "其他交换机",
  "map.category.card": "加速卡",
  "map.category.nic": "网卡",
  "map.category.host": "主机",
  "map.category.aggregation": "聚合节点",
  "map.category.other": "其他",
  "map.link.up": "链路正常",
  "map.link.degraded": "链路降级",
  "map.link.down": "链路中断",
  "map.kind.card": "加速卡",
  "map.kind.switch": "交换机",
  "map.kind.nic": "网卡",
  "map.kind.host": "主机",
  "map.kind.aggregation": "聚合节点",
  "map.tooltip.kind": "类型",
  "map.tooltip.tier": "层级",
  "map.tooltip.host": "主机",
  "map.tooltip.degree": "链路数",
  "map.tooltip.none": "—",

  "list.separator": "，",
  "size.bytes": "{size} B",
  "size.kib": "{size} KiB",
  "size.mib": "{size} MiB",
  "size.gib": "{size} GiB",

  "upload.sending": "正在上传… {percent}",
  "upload.processing": "正在解析并保存…",
  "upload.stored": "已保存为 v{version}（识别的格式：{format}）",
  "upload.open": "打开该网络",
  "upload.nodes": "节点",
  "upload.links": "链路",
  "upload.speeds": "速率",
  "upload.count": "{label}：{count}",
  "upload.withBreakdown": "{total}（{list}）",
  "upload.atSpeed": "{count} × {speed}",
  "upload.linkState.up": "正常",
  "upload.linkState.degraded": "降级",
  "upload.linkState.down": "中断",
  "upload.rejected": "未保存任何内容；请查看表单中标出的问题。",
  "upload.unnamedSource": "上传",
  "upload.truncated": "……以及更多（仅列出前面的问题）",

  "fabricLive.snapshot": "新快照 v{version}（{role}），格式为 {format}。",
  "fabricLive.snapshotBy": "{user} 上传了新快照 v{version}（{role}），格式为 {format}。",
  "fabricLive.show": "查看",
  "fabricLive.role.discovered": "已发现",
  "fabricLive.role.plan": "布线规划",
};

export type Language = "en" | "zh-hans";

export const MESSAGES: Readonly<Record<Language, Readonly<Record<MessageKey, string>>>> = {
  en,
  "zh-hans": zhHans,
};

/** BCP 47 tag for Intl formatters; Django's language codes are lower-case. */
export const INTL_LOCALE: Readonly<Record<Language, string>> = {
  en: "en",
  "zh-hans": "zh-Hans",
};

export function resolveLanguage(lang: string | undefined): Language {
  return lang?.toLowerCase() === "zh-hans" ? "zh-hans" : "en";
}

export type MessageParams = Readonly<Record<string, string | number>>;
export type Translate = (key: MessageKey, params?: MessageParams) => string;

/** Returns a translator; `{name}` placeholders are filled from params, unknown ones are left visible. */
export function translator(language: Language): Translate {
  const table = MESSAGES[language];
  return (key, params) =>
    table[key].replace(/\{(\w+)\}/g, (placeholder, name: string) =>
      params !== undefined && name in params ? String(params[name]) : placeholder,
    );
}
