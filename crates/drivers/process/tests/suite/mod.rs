mod child;
mod orphans;
mod planted;
