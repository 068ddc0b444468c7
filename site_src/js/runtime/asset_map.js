// This build's content versions. The build replaces this file
// (site_src/hooks/asset_versions.py); this copy, with empty maps, is what the
// scripts see when they run straight from site_src/ (the Node tests): plain,
// unversioned paths.
export const BUILD_ID = "";
export const FILE_VERSIONS = {};
export const FOLDER_VERSIONS = {};
export const FILE_SIZES = {};
export const FILE_DIGESTS = {};
