mod index;
