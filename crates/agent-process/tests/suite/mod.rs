mod child;
mod orphans;
mod planted;
mod version;
