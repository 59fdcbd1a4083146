// Colours of every plot. Series take Okabe and Ito's palette, told apart with every common
// colour-vision deficiency; heatmaps take viridis, whose lightness grows evenly from low
// to high, so a cell reads the same in grey.

export const SERIES_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"] as const;

/** Viridis, low (dark blue) to high (yellow). */
export const SEQUENTIAL_COLOURS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"] as const;

/** The one mark that stands out from the rest (the fastest algorithm, the best strategy, the knee). */
export const HIGHLIGHT_COLOUR = "#D55E00";
export const MUTED_COLOUR = "#56B4E9";
