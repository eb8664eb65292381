"""Inputs: tables from files, uploads and hub ids; labelled sets, problem sets, multiple-choice questions, demo data."""
