mod accumulate;
mod patch;
mod typescript;
