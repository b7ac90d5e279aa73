import Link from "next/link";

export function Brand() {
  return (
    <Link href="/fleet" className="flex items-center gap-2 font-semibold tracking-tight">
      {/* biome-ignore lint/performance/noImgElement: a static SVG icon, nothing for next/image to optimize */}
      <img src="/icons/icon.svg" alt="" width={24} height={24} className="rounded-md" />
      Edgefleet
    </Link>
  );
}
