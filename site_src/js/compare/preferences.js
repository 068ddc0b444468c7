// The learner's backend choice: ?backend= in the address wins, then the
// choice saved for this tab (a reload to switch to WebGPU keeps it).

const KEY = "mha-compare-backend";
export const PREFERENCES = ["auto", "wasm", "webgpu"];

export function readPreference() {
  const fromUrl = new URLSearchParams(location.search).get("backend");
  if (PREFERENCES.includes(fromUrl)) return fromUrl;
  try {
    const saved = sessionStorage.getItem(KEY);
    if (PREFERENCES.includes(saved)) return saved;
  } catch {
    /* storage may be blocked */
  }
  return "auto";
}

export function savePreference(preference) {
  try {
    sessionStorage.setItem(KEY, preference);
  } catch {
    /* storage may be blocked: the choice lasts for this page only */
  }
}
