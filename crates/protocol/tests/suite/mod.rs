mod accumulate;
mod patch;
mod typescript;
mod ts_patch_fixtures;
