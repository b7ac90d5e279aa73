"use client";

import { type RefObject, useEffect } from "react";

const EVENT = "edgefleet:focus-target";

/**
 * Lets the command palette land on a form, not just a page: `/enrollment#new-token` (or the event
 * the palette sends when that page is already open) focuses the first field inside `ref`.
 */
export function useFocusTarget(id: string, ref: RefObject<HTMLElement | null>) {
  useEffect(() => {
    const focus = () => {
      const field = ref.current?.querySelector<HTMLElement>("input, select, textarea, button");
      ref.current?.scrollIntoView({ block: "start" });
      field?.focus();
    };
    if (window.location.hash === `#${id}`) focus();
    const onEvent = (event: Event) => {
      if ((event as CustomEvent<string>).detail === id) focus();
    };
    window.addEventListener(EVENT, onEvent);
    return () => window.removeEventListener(EVENT, onEvent);
  }, [id, ref]);
}

export function requestFocusTarget(id: string) {
  // After the navigation has rendered the page (same page: at once; new page: on mount, by hash).
  setTimeout(() => window.dispatchEvent(new CustomEvent(EVENT, { detail: id })), 50);
}
