mod fork;
mod index;
