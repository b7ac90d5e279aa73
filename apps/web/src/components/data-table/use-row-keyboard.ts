"use client";

import type { KeyboardEvent } from "react";

/**
 * Keyboard navigation between the rows of a table (one tab stop per table; arrows move, Home/End
 * jump, Enter opens the row's first link, Space toggles its selection checkbox). Rows carry
 * `data-row` and a tabIndex; `onMove` lets a virtualized table scroll a row in before focusing.
 */
export function onRowKeyDown(event: KeyboardEvent<HTMLElement>, onMove?: (index: number) => void) {
  const row = (event.target as HTMLElement).closest<HTMLElement>("[data-row]");
  if (!row || event.target !== row) return;
  const container = event.currentTarget;
  const rows = [...container.querySelectorAll<HTMLElement>("[data-row]")];
  const at = rows.indexOf(row);
  const focus = (index: number) => {
    const target = rows[Math.max(0, Math.min(rows.length - 1, index))];
    if (!target) return;
    event.preventDefault();
    row.tabIndex = -1;
    target.tabIndex = 0;
    target.focus();
    onMove?.(Number(target.dataset.index ?? index));
  };
  switch (event.key) {
    case "ArrowDown":
    case "j":
      return focus(at + 1);
    case "ArrowUp":
    case "k":
      return focus(at - 1);
    case "Home":
      return focus(0);
    case "End":
      return focus(rows.length - 1);
    case "Enter":
      event.preventDefault();
      row.querySelector<HTMLElement>("a[href]")?.click();
      return;
    case " ":
      event.preventDefault();
      row.querySelector<HTMLElement>('[role="checkbox"]')?.click();
      return;
  }
}
