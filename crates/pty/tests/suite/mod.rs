mod bridge;
mod screen;
