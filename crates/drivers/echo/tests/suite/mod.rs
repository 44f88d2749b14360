mod echo;
