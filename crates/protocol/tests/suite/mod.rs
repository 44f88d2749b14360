mod accumulate;
mod patch;
mod ts_patch_fixtures;
mod typescript;
