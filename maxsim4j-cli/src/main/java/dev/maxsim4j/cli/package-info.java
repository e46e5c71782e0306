package dev.maxsim4j.cli;
