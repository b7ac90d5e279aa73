"use client";

import { MonitorIcon, MoonIcon, SunIcon } from "lucide-react";
import { useTheme } from "next-themes";
import { Button } from "../ui/button";
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuLabel,
  DropdownMenuRadioGroup,
  DropdownMenuRadioItem,
  DropdownMenuTrigger,
} from "../ui/dropdown-menu";

/**
 * The console's themes, once: the theme menu shows `label`, the command palette offers `action`
 * (found also by `keywords`).
 */
export const THEMES = [
  {
    value: "system",
    label: "System",
    action: "Theme of the system",
    keywords: ["auto", "colour"],
    icon: MonitorIcon,
  },
  { value: "light", label: "Light", action: "Light theme", keywords: ["day", "colour"], icon: SunIcon },
  { value: "dark", label: "Dark", action: "Dark theme", keywords: ["night", "colour"], icon: MoonIcon },
] as const;

/** Light, dark, or whatever the system says (the default); remembered per browser by next-themes. */
export function ThemeToggle() {
  const { theme, setTheme } = useTheme();
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button type="button" variant="ghost" size="icon" aria-label="Theme">
          <SunIcon aria-hidden className="dark:hidden" />
          <MoonIcon aria-hidden className="hidden dark:block" />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end">
        <DropdownMenuLabel>Theme</DropdownMenuLabel>
        <DropdownMenuRadioGroup value={theme ?? "system"} onValueChange={setTheme}>
          {THEMES.map((option) => (
            <DropdownMenuRadioItem key={option.value} value={option.value}>
              <option.icon aria-hidden />
              {option.label}
            </DropdownMenuRadioItem>
          ))}
        </DropdownMenuRadioGroup>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
